//! Production-shaped kernels ([`GenConfig::production_percent`](super::GenConfig::production_percent)):
//! the two decode-time kernels the resident-Ref change was made for (Helion's pretuned
//! `causal_conv1d` and `gdn_decode` kernels), drawn whole rather than from items, in the
//! spelling Helion's kernels use (`batch, dim = x.size()`, `torch.empty_like`, `.to(out.dtype)`,
//! `hl.tile([m, n])`, kernels that write their arguments in place and return nothing), read by
//! the frontend like any case script.
//!
//! - **A decode-step convolution** ([`Gen::decode_conv`]): each request's window of the last
//!   `width - 1` inputs read out of a state cache through an index tensor (`conv_state[idx[tb],
//!   :, td]`, Helion's one-hot gather), the weights' block narrowed by static slices and
//!   constant indices (`w[0:3, :]`, `w[3, :]`: resident-Ref reads), and now and then the
//!   window shifted and written back into the cache through the same index, the kernel then
//!   writing its arguments in place and returning nothing (a scatter, which our model answers
//!   `unsupported` and the reference and Helion check). The taps are either
//!   one product summed over the window or one narrowed read per tap; a tap read straight out
//!   of the gathered window is Helion's `indirect.narrowed-needs-dma` refusal, one read after a
//!   conversion is gathered by one-hot.
//! - **A recurrent state update with `hl.dot`** ([`Gen::recurrent_dot`]): per request a state
//!   `[k, v]` (zeros, or read out of a state cache through an index tensor), updated per token
//!   over chunks with a ragged last chunk (`for step in hl.tile(chunk.end - chunk.begin,
//!   block_size=1)`), tokens read out of the chunk's resident blocks by `step.begin`, decayed
//!   and grown by `hl.dot(k_t.transpose(0, 1), v_t)`, read by `hl.dot(q_t, state)`.
//!
//! Sizes sit at tile boundaries (one below, at and one above a multiple of the block, a single
//! row) as often as elsewhere. Inputs are small integers (in float32 or bfloat16), so every
//! product and sum is exact and no engine's result depends on its summation order or on
//! fusing a multiply-add; a decay of 1/2 keeps the recurrent state exact for the few tokens a
//! case has. These kernels are larger than the grammar's (dots of up to 32 x 8 x 128 per token)
//! and still evaluate in milliseconds.

use super::Gen;
use arbitrary::Result;
use lang::ir::{Case, DType};

/// The lanes of the convolution's channels and of the recurrent state's values: one and two
/// vregs' worth (TPU lanes are 128 wide).
const LANES: [usize; 2] = [128, 256];

impl Gen<'_, '_> {
    /// A production-shaped case: the convolution or the recurrence, by halves.
    pub(super) fn production_case(mut self) -> Result<Case> {
        let source = if self.u.ratio(1, 2)? {
            self.decode_conv()?
        } else {
            self.recurrent_dot()?
        };
        let case = lang::frontend::parse_case(&source, "production.py").unwrap_or_else(|e| {
            panic!("harness bug: a production-shaped kernel does not parse: {e}\n{source}")
        });
        Ok(case)
    }

    /// A float dtype the config enables (float32 when it enables none).
    fn production_dtype(&mut self) -> Result<DType> {
        let mut dtypes = Vec::new();
        if self.cfg.float32 {
            dtypes.push(DType::Float32);
        }
        if self.cfg.bfloat16 {
            dtypes.push(DType::Bfloat16);
        }
        Ok(match dtypes.as_slice() {
            [] => DType::Float32,
            d => *self.u.choose(d)?,
        })
    }

    /// The `pallas_loop_type` keyword among the enabled loop types (the grammar's own draw).
    fn production_loop_type(&mut self) -> Result<&'static str> {
        self.choose_loop_type()?;
        Ok(self.loop_type.name())
    }

    /// A count of rows near a tile boundary of `block` (one below, at, one above a multiple,
    /// or a single row) half the time, else anywhere in `1..=max`.
    fn rows_near(&mut self, block: usize, max: usize) -> Result<usize> {
        let max = max.max(1);
        if self.u.ratio(1, 2)? {
            let k = self.range(1, (max / block.max(1)).max(1))?;
            let near = [k * block - 1, k * block, k * block + 1, 1];
            let fitting: Vec<usize> = near
                .into_iter()
                .filter(|&r| (1..=max).contains(&r))
                .collect();
            if !fitting.is_empty() {
                return Ok(*self.u.choose(&fitting)?);
            }
        }
        self.range(1, max)
    }

    /// `torch.randint(lo, hi, shape, dtype=torch.int32)` as `dtype`: small exact values.
    fn small_ints(shape: &[usize], lo: i64, hi: i64, dtype: DType) -> String {
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        let tuple = if dims.len() == 1 {
            format!("({},)", dims[0])
        } else {
            format!("({})", dims.join(", "))
        };
        format!(
            "torch.randint({lo}, {hi}, {tuple}, dtype=torch.int32).to({})",
            dtype.torch_name()
        )
    }

    /// A decode-step causal convolution over a state cache (module docs).
    fn decode_conv(&mut self) -> Result<String> {
        let dtype = self.production_dtype()?;
        let loop_type = self.production_loop_type()?;
        let width = self.range(2, 4)?;
        let taps = width - 1;
        let dim = *self.u.choose(&LANES)?;
        let block_b = *self.u.choose(&[1usize, 2, 4, 8])?;
        let batch = self.rows_near(block_b, self.cfg.max_rows as usize)?;
        let slots = batch + self.range(0, 3)?;
        // A write-back needs one slot per request (a scatter through repeated indices
        // leaves which write wins to the engine) and a window of two taps or more to shift.
        let write_back = taps >= 2 && self.u.ratio(1, 4)?;
        let two_d = self.u.ratio(2, 3)?;
        let block_d = if two_d && dim > 128 && self.u.ratio(1, 2)? {
            128
        } else {
            dim
        };
        let per_tap = self.u.ratio(1, 2)?;
        let (td, cfg_blocks, loop_head) = if two_d {
            (
                "td",
                format!("[{block_b}, {block_d}]"),
                "for tb, td in hl.tile([batch, dim]):".to_string(),
            )
        } else {
            (
                ":",
                "[]".to_string(),
                format!("for tb in hl.tile(batch, block_size={block_b}):"),
            )
        };
        let mut body = vec![
            format!("window = conv_state[idx[tb], :, {td}]"),
            format!("w = weight[:, {td}]"),
        ];
        if per_tap {
            // `.float()` of a float32 window is the window itself: a tap read out of it is a
            // narrowed gather (refused in 1.5.1); of a bfloat16 one, a new value.
            body.push("taps = window.float()".into());
            body.push(format!(
                "acc = x[tb, {td}].float() * w[{taps}, :].float()[None, :]"
            ));
            for k in 0..taps {
                body.push(format!(
                    "acc = acc + taps[:, {k}, :] * w[{k}, :].float()[None, :]"
                ));
            }
        } else {
            body.push(format!(
                "acc = (window.float() * w[0:{taps}, :].float()[None, :, :]).sum(1)"
            ));
            body.push(format!(
                "acc = acc + x[tb, {td}].float() * w[{taps}, :].float()[None, :]"
            ));
        }
        body.push(format!("out[tb, {td}] = acc.to(out.dtype)"));
        if write_back {
            // The shifted window read again from the cache, not out of `window`: a narrowed
            // read of a gathered value would make Helion refuse every write-back case.
            body.push(format!(
                "conv_state[idx[tb], 0:{}, {td}] = conv_state[idx[tb], 1:{taps}, {td}]",
                taps - 1
            ));
            body.push(format!(
                "conv_state[idx[tb], {}:{taps}, {td}] = x[tb, {td}].unsqueeze(1)",
                taps - 1
            ));
        }
        let body = body
            .iter()
            .map(|l| format!("        {l}\n"))
            .collect::<String>();
        // Requests in distinct slots when the kernel writes the cache back; anywhere in it
        // otherwise (two requests may share a slot).
        let idx = if write_back {
            let first = slots - 1;
            format!(
                "torch.arange({first}, {}, -1, dtype=torch.int32)",
                first as i64 - batch as i64
            )
        } else {
            format!("torch.randint(0, {slots}, ({batch},), dtype=torch.int32)")
        };
        let (signature, alloc, ret, call) = if write_back {
            (
                "x: torch.Tensor, conv_state: torch.Tensor, weight: torch.Tensor, idx: torch.Tensor, out: torch.Tensor",
                String::new(),
                "",
                "decode_conv(x, conv_state, weight, idx, out)",
            )
        } else {
            (
                "x: torch.Tensor, conv_state: torch.Tensor, weight: torch.Tensor, idx: torch.Tensor",
                "    out = torch.empty_like(x)\n".to_string(),
                "    return out\n",
                "decode_conv(x, conv_state, weight, idx)",
            )
        };
        let ret_ann = if write_back { "None" } else { "torch.Tensor" };
        let seed = self.range(0, 999)?;
        Ok(format!(
            r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes={cfg_blocks}, pallas_loop_type="{loop_type}"),
)
def decode_conv({signature}) -> {ret_ann}:
    batch, dim = x.size()
{alloc}    {loop_head}
{body}{ret}

torch.manual_seed({seed})
x = {x}
conv_state = {state}
weight = {weight}
idx = {idx}
{out}{call}
"#,
            x = Self::small_ints(&[batch, dim], -4, 5, dtype),
            state = Self::small_ints(&[slots, taps, dim], -4, 5, dtype),
            weight = Self::small_ints(&[width, dim], -4, 5, dtype),
            out = if write_back {
                format!(
                    "out = torch.zeros({batch}, {dim}, dtype={})\n",
                    dtype.torch_name()
                )
            } else {
                String::new()
            },
        ))
    }

    /// A recurrent state update with `hl.dot` (module docs).
    fn recurrent_dot(&mut self) -> Result<String> {
        let dtype = self.production_dtype()?;
        let loop_type = self.production_loop_type()?;
        let requests = self.range(1, 2)?;
        let chunk = *self.u.choose(&[1usize, 2, 4, 8])?;
        let tokens = self.rows_near(chunk, 9)?;
        let heads = *self.u.choose(&[1usize, 8])?;
        let kdim = *self.u.choose(&[8usize, 16, 32])?;
        let vdim = 128;
        let from_cache = self.u.ratio(1, 2)?;
        let slots = requests + self.range(0, 2)?;
        let decays = self.u.ratio(2, 3)?;
        let init = if from_cache {
            "state = h0[idx[request], :, :].float()".to_string()
        } else {
            "state = hl.zeros([d, v.size(3)], dtype=torch.float32)".to_string()
        };
        let chunk_read = |name: &str| format!("{name}[request, chunk, :, :]");
        let mut step = vec![
            "k_t = k_chunk[step.begin, :, :]".to_string(),
            "v_t = v_chunk[step.begin, :, :]".to_string(),
        ];
        if decays {
            step.push("state = state * g_chunk[step.begin, :][:, None]".into());
        }
        step.push("state = hl.dot(k_t.transpose(0, 1), v_t, acc=state)".into());
        step.push("acc = hl.dot(q_chunk[step.begin, :, :].float(), state, acc=acc)".into());
        let step = step
            .iter()
            .map(|l| format!("                {l}\n"))
            .collect::<String>();
        let g_chunk = if decays {
            "            g_chunk = g[request, chunk, :]\n"
        } else {
            ""
        };
        let (g_param, g_arg, g_input) = if decays {
            // 1/2 (a state halved per token stays exact) or 0 and 1 (a state reset or kept).
            let g = if self.u.ratio(1, 2)? {
                format!("torch.full(({requests}, {tokens}, {kdim}), 0.5)")
            } else {
                Self::small_ints(&[requests, tokens, kdim], 0, 2, DType::Float32)
            };
            (", g: torch.Tensor", ", g", format!("g = {g}\n"))
        } else {
            ("", "", String::new())
        };
        let (h_param, h_arg, h_input) = if from_cache {
            (
                ", h0: torch.Tensor, idx: torch.Tensor",
                ", h0, idx",
                format!(
                    "h0 = {}\nidx = torch.randint(0, {slots}, ({requests},), dtype=torch.int32)\n",
                    Self::small_ints(&[slots, kdim, vdim], -2, 3, DType::Float32)
                ),
            )
        } else {
            ("", "", String::new())
        };
        let seed = self.range(0, 999)?;
        Ok(format!(
            r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="{loop_type}"),
)
def recurrent_dot(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor{g_param}{h_param}) -> torch.Tensor:
    r, t, h, d = q.size()
    out = torch.zeros([r, h, v.size(3)], dtype=torch.float32)
    for request in hl.grid(r):
        {init}
        acc = hl.zeros([h, v.size(3)], dtype=torch.float32)
        for chunk in hl.tile(t, block_size={chunk}):
            q_chunk = {q_read}
            k_chunk = {k_read}
            v_chunk = {v_read}
{g_chunk}            live = chunk.end - chunk.begin
            for step in hl.tile(live, block_size=1):
{step}        out[request, :, :] = acc
    return out


torch.manual_seed({seed})
q = {q}
k = {k}
v = {v}
{g_input}{h_input}recurrent_dot(q, k, v{g_arg}{h_arg})
"#,
            q_read = chunk_read("q"),
            k_read = chunk_read("k"),
            v_read = chunk_read("v"),
            q = Self::small_ints(&[requests, tokens, heads, kdim], -2, 3, dtype),
            k = Self::small_ints(&[requests, tokens, heads, kdim], -2, 3, dtype),
            v = Self::small_ints(&[requests, tokens, heads, vdim], -2, 3, dtype),
        ))
    }
}
