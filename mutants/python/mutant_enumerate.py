"""pallas-diff mutant enumeration: every single-site mutant of a set of Python files.

The operators are mutmut 3's (`mutmut.mutation.mutators.mutation_operators`, applied on the
libcst tree by mutmut's own `MutationVisitor`, which also owns what is never mutated: type
annotations, decorators, non-trivial default arguments), plus two domain operators mutmut does
not have: `min`/`max` swapped and a call dropped to its first argument (`max(0, x)` -> `0`,
`clamp(x)` -> `x`: "drop a clamp"). mutmut skips decorated functions because its trampolines
cannot wrap them; we apply a mutant by replacing the whole module, so they are mutated too.

Request (stdin, JSON): {"files": [{"path": "<file on disk>", "rel": "<its id, e.g.
helion/_compiler/pallas/view_ops.py>"}]}
Response (stdout, JSON): {"mutants": [{"file", "line", "column", "end_line", "operator",
"occurrence", "start", "end", "replacement", "original", "in_message"}], "errors": [...]}

`start`/`end` are character offsets into the file's text (as Python reads it, UTF-8) and
`replacement` the text that goes there: applying a mutant is one splice. `occurrence` tells
apart mutants of one operator at one position (an operator may yield several). `in_message` is
true for a mutant inside a message: a `raise` statement, an `assert`'s message, the arguments
of a logging or message call (`log.debug(...)`, `warnings.warn(...)`) or of an exception's
constructor (`exc.BackendUnsupported(...)`): counted apart in the summary.
"""

import json
import sys

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider
from mutmut.mutation.file_mutation import MutationVisitor
from mutmut.mutation.mutators import mutation_operators
from mutmut.mutation.pragma_handling import IgnoredCode


def operator_min_max_swap(node):
    """`min(...)` <-> `max(...)`."""
    if isinstance(node.func, cst.Name) and node.func.value in ("min", "max"):
        other = "max" if node.func.value == "min" else "min"
        yield node.with_changes(func=node.func.with_changes(value=other))


def operator_drop_clamp(node):
    """`min(a, b)`/`max(a, b)` -> `a`: the clamp dropped."""
    if isinstance(node.func, cst.Name) and node.func.value in ("min", "max") and len(node.args) == 2:
        a = node.args[0]
        if a.star == "" and a.keyword is None:
            yield a.value


# Which operator made each mutated node (by id; the visitor keeps the nodes alive).
_MADE_BY = {}


def _tagged(fn):
    name = fn.__name__.removeprefix("operator_")

    def op(node):
        for mutated in fn(node):
            _MADE_BY[id(mutated)] = name
            yield mutated

    return op


OPERATORS = [(t, _tagged(fn)) for t, fn in mutation_operators] + [
    (cst.Call, _tagged(operator_min_max_swap)),
    (cst.Call, _tagged(operator_drop_clamp)),
]

_MESSAGE_CALLS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print", "format"}


class _Visitor(MutationVisitor):
    def _skip_node_and_children(self, node):
        # mutmut skips decorated functions for its trampolines' sake; a module replaced whole
        # has no such limit. Decorators themselves stay unmutated (run at import time).
        if isinstance(node, cst.FunctionDef) and len(node.decorators):
            return False
        return super()._skip_node_and_children(node)


class _MessageSpans(cst.CSTVisitor):
    """Line/column spans of messages: a `raise` statement, an `assert`'s message, the
    arguments of a logging or message call (`log.debug(...)`, `warnings.warn(...)`,
    `"...".format(...)`), such a call itself, and an exception's constructor (`exc.BackendUnsupported(...)`,
    `ValueError(...)`). A string literal elsewhere is code (`p.kind in ("a", "b")`)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self):
        self.spans = []

    def _add(self, node):
        p = self.get_metadata(PositionProvider, node, None)
        if p is not None:
            self.spans.append(((p.start.line, p.start.column), (p.end.line, p.end.column)))

    def visit_Raise(self, node):
        self._add(node)

    def visit_Assert(self, node):
        if node.msg is not None:
            self._add(node.msg)

    def visit_Call(self, node):
        f = node.func
        name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else None
        owner = f.value.value if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) else None
        exception = name is not None and (name.endswith(("Error", "Exception", "Warning")) or owner == "exc")
        if name in _MESSAGE_CALLS or exception:
            self._add(node)


def _line_starts(text):
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def mutants_of(text, rel):
    """Every mutant of one file's text, in source order."""
    module = cst.parse_module(text)
    wrapper = MetadataWrapper(module)
    visitor = _Visitor(OPERATORS, IgnoredCode(set(), set(), set()))
    wrapper.visit(visitor)
    messages = _MessageSpans()
    wrapper.visit(messages)
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    module = wrapper.module
    starts = _line_starts(text)
    ascii_text = text.isascii()

    def byte_offset(i):
        return i if ascii_text else len(text[:i].encode("utf-8"))

    out = []
    seen = {}
    for m in visitor.mutations:
        node = m.original_node
        pos = positions.get(node)
        if pos is None:
            continue
        start = starts[pos.start.line - 1] + pos.start.column
        end = starts[pos.end.line - 1] + pos.end.column
        original = text[start:end]
        # Rendered at the indentation of its block, as the file has it: a node spanning lines
        # rendered at column 0 loses the indentation of its continuation lines.
        indent = _indent_tokens(node, parents, module)
        replacement = _render(m.mutated_node, indent, module)
        original_rendered = _render(node, indent, module)
        if original_rendered != original:
            # The node owns text its span does not show (a comparison target's operator, a
            # call's trailing comma, its parentheses): splice its rendering where it sits,
            # nearest the span; else render the whole module (slow: ~0.3 s for view_ops.py,
            # which once took 470 of these, 140 s, before rendering at the block's indentation).
            found = _nearest(text, original_rendered, start, end)
            if found is not None:
                start, end, original = found, found + len(original_rendered), original_rendered
            else:
                mutated = wrapper.module.deep_replace(node, m.mutated_node).code
                start, end, replacement = _splice_of(text, mutated)
                original = text[start:end]
        if replacement == original:
            continue
        operator = _operator_name(node, m.mutated_node, _MADE_BY.get(id(m.mutated_node), "unknown"))
        key = (pos.start.line, pos.start.column, operator)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        here = (pos.start.line, pos.start.column)
        in_message = any(a <= here < b or here == a for a, b in messages.spans)
        out.append(
            {
                "file": rel,
                "line": pos.start.line,
                "column": pos.start.column,
                "end_line": pos.end.line,
                "operator": operator,
                "occurrence": occurrence,
                "start": byte_offset(start),
                "end": byte_offset(end),
                "replacement": replacement,
                "original": original,
                "in_message": in_message,
            }
        )
    return out


def _indent_tokens(node, parents, module):
    """The indentation of the blocks enclosing `node`, outermost first, as libcst's code
    generator keeps it (`CodegenState.indent_tokens`)."""
    tokens = []
    p = parents.get(node)
    while p is not None:
        if isinstance(p, cst.IndentedBlock):
            tokens.append(module.default_indent if p.indent is None else p.indent)
        p = parents.get(p)
    tokens.reverse()
    return tokens


def _render(node, indent, module):
    """`node`'s code as it reads inside blocks indented by `indent`."""
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    state.indent_tokens.extend(indent)
    node._codegen(state)
    return "".join(state.tokens)


def _operator_name(node, mutated, made_by):
    """The mutmut operator that made the mutant, with what it swapped where that says more
    (`swap_op:Add->Subtract`, `keywords:Is->IsNot`, `name:True->False`)."""
    a, b = getattr(node, "operator", None), getattr(mutated, "operator", None)
    if made_by == "swap_op" and a is not None and b is not None:
        return "swap_op:%s->%s" % (type(a).__name__, type(b).__name__)
    if made_by == "keywords":
        return "keywords:%s->%s" % (type(node).__name__, type(mutated).__name__)
    if made_by == "name":
        return "name:%s->%s" % (node.value, mutated.value)
    return made_by


def _nearest(text, needle, start, end):
    """The offset of `needle` in `text` overlapping [start, end) nearest `start`, or None."""
    lo = max(0, start - len(needle))
    best = None
    i = text.find(needle, lo, end + len(needle))
    while i != -1 and i <= end:
        if i + len(needle) >= start and (best is None or abs(i - start) < abs(best - start)):
            best = i
        i = text.find(needle, i + 1, end + len(needle))
    return best


def _splice_of(old, new):
    """The one (start, end, replacement) that turns `old` into `new`."""
    i = 0
    n = min(len(old), len(new))
    while i < n and old[i] == new[i]:
        i += 1
    j = 0
    while j < n - i and old[len(old) - 1 - j] == new[len(new) - 1 - j]:
        j += 1
    return i, len(old) - j, new[i : len(new) - j]


def main():
    req = json.load(sys.stdin)
    mutants, errors = [], []
    for f in req["files"]:
        try:
            with open(f["path"], encoding="utf-8") as fh:
                text = fh.read()
            mutants.extend(mutants_of(text, f["rel"]))
        except Exception as e:  # noqa: BLE001  (reported per file, with its name)
            errors.append({"file": f["rel"], "error": "%s: %s" % (type(e).__name__, e)})
    json.dump({"mutants": mutants, "errors": errors}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
