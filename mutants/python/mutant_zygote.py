"""pallas-diff mutant fork server: imports what Helion needs once, forks a Helion worker per
mutant with the mutant's files in place of Helion's.

A Helion worker spends ~6 s importing torch, JAX and Helion; Helion's own 331 modules are
~0.8 s of it once torch and JAX are in (measured 2026-12-05 on 2 shared cores). So this server
imports every module a Helion worker imports *except Helion's* (the list is learnt at start
from a probe child that imports the worker's set and reports `sys.modules`), and each child
then imports Helion fresh with a finder on `sys.meta_path` that loads the mutant's files in
place of the installed ones: the mutant replaces the module before any of Helion's compiler
modules are imported, no module is reloaded, and the installed package is never edited.

    python mutant_zygote.py SOCKET WORKER_DIR

WORKER_DIR holds helion_worker.py and worker_protocol.py (tpu-runner/python). When it listens
it writes one line "ready <modules pre-imported>" on stdout. Each connection (from
mutant_worker.py, the pool's worker script) sends one JSON message with three file descriptors
(the worker's stdin, stdout, stderr):

    {"modules": {"helion._compiler.pallas.view_ops": "<file>", ...},
     "coverage": null | {"include": ["<file pattern>", ...], "out": "<dir>"},
     "env": {"PALLAS_DIFF_WORK_DIR": ..., "XLA_FLAGS": ..., ...},
     "launcher": <pid>}

and the child becomes a Helion worker on those descriptors (helion_worker.py's protocol,
hello line included; a mutant that fails to import Helion is its failed hello, exit 3). The
child exits when its launcher goes away (the connection closes: the pool killed it on a
timeout) or on `shutdown`.

With `coverage`, coverage.py measures the child: the lines Helion's import ran are written
to <out>/import.json, and after each `run` the lines that request ran to <out>/last.json as
{"source_sha256_16": <first 16 hex of sha256(source)>, "lines": {"<file>": [n, ...]}}.
"""

import importlib
import importlib.abc
import importlib.util
import json
import os
import signal
import socket
import sys
import threading
import traceback

_SKIP_PREFIXES = ("helion", "__main__", "worker_protocol", "helion_worker", "mutant_")


def probe_modules(worker_dir):
    """The modules a Helion worker imports, minus Helion's, in import order (a probe child
    imports them and reports; this process stays free of Helion)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            import torch  # noqa: F401
            import helion  # noqa: F401
            import helion.language  # noqa: F401
            import helion.exc  # noqa: F401
            import helion.runtime.kernel  # noqa: F401

            try:
                import helion.runtime.pallas.launcher  # noqa: F401
            except ImportError:
                pass
            import helion._compiler.compile_environment  # noqa: F401
            import helion._compiler.source_location  # noqa: F401
            import torch._inductor.codecache  # noqa: F401
            import torch.fx.experimental.symbolic_shapes  # noqa: F401
            import jax  # noqa: F401
            import jaxlib  # noqa: F401
            from jax.experimental import pallas  # noqa: F401
            from jax.experimental.pallas import tpu  # noqa: F401
            from jax._src.mesh import AbstractDevice  # noqa: F401

            names = [n for n in sys.modules if not n.startswith(_SKIP_PREFIXES)]
            with os.fdopen(w, "w") as f:
                json.dump(names, f)
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError("the probe child could not import the Helion worker's modules (see stderr)")
    return json.loads(data)


class OverlayFinder(importlib.abc.MetaPathFinder):
    """Loads the named modules from the mutant's files."""

    def __init__(self, modules):
        self.modules = modules

    def find_spec(self, name, path, target=None):
        file = self.modules.get(name)
        if file is None:
            return None
        return importlib.util.spec_from_file_location(name, file)


def _watch(conn):
    """Exits when the launcher is gone (its end of the connection closed)."""
    try:
        while conn.recv(1):
            pass
    except OSError:
        pass
    os._exit(70)


def _sha16(text):
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def _lines_of(cov):
    data = cov.get_data()
    return {f: sorted(data.lines(f) or []) for f in data.measured_files()}


def child(listener, conn, fds, req, worker_dir):
    listener.close()
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
        os.close(fd)
    os.environ.update(req.get("env", {}))
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    threading.Thread(target=_watch, args=(conn,), daemon=True).start()
    sys.path.insert(0, worker_dir)
    sys.meta_path.insert(0, OverlayFinder(req.get("modules", {})))
    cov_req = req.get("coverage")
    cov = None
    if cov_req:
        import coverage

        cov = coverage.Coverage(data_file=None, include=cov_req["include"], config_file=False)
        cov.start()
    try:
        import helion_worker
        import worker_protocol
    except SystemExit as e:  # the worker's failed hello was sent (a mutant that breaks the import)
        os._exit(e.code if isinstance(e.code, int) else 3)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(3)
    handler = helion_worker.handle_run
    if cov is not None:
        cov.stop()
        _write_json(os.path.join(cov_req["out"], "import.json"), {"lines": _lines_of(cov)})
        cov.erase()

        def handler(req_id, request):
            cov.start()
            try:
                return helion_worker.handle_run(req_id, request)
            finally:
                cov.stop()
                source = request.get("source") if isinstance(request.get("source"), str) else ""
                _write_json(
                    os.path.join(cov_req["out"], "last.json"),
                    {"source_sha256_16": _sha16(source), "lines": _lines_of(cov)},
                )
                cov.erase()

    try:
        worker_protocol.serve(helion_worker.probe_info, {"run": handler})
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        import shutil

        shutil.rmtree(helion_worker.WORK_DIR, ignore_errors=True)
        os._exit(0)


def main():
    sock_path, worker_dir = sys.argv[1], sys.argv[2]
    # Our stdout is the ready line's; whatever the imports print goes to stderr.
    ready = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    names = probe_modules(worker_dir)
    imported = 0
    for name in names:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
            imported += 1
        except BaseException:  # noqa: BLE001  (a submodule that only imports in its parent's context)
            pass
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(64)
    ready.write("ready %d\n" % imported)
    ready.flush()
    ready.close()
    while True:
        conn, _ = listener.accept()
        try:
            msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
            req = json.loads(msg.decode("utf-8"))
        except Exception:  # noqa: BLE001  (a bad connection: drop it, keep serving)
            traceback.print_exc()
            conn.close()
            continue
        pid = os.fork()
        if pid == 0:
            child(listener, conn, fds, req, worker_dir)
        for fd in fds:
            os.close(fd)
        conn.close()


if __name__ == "__main__":
    main()
