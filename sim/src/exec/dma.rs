//! Manual DMA: `pltpu.make_async_copy(src, dst, sem).start()` / `.wait()`, the copies
//! pending on each semaphore element, and when the copy happens under each interpreter.

use super::refs::{Access, root_buffer};
use super::{Machine, describe, te};
use crate::error::{ErrorKind, SimError, SimResult, SimStage};
use crate::resolve::RExpr;
use crate::value::{Value, View};
use std::rc::Rc;

/// A DMA issued by `.start()` and not yet consumed by a `.wait()` on its semaphore.
pub(super) struct Pending {
    /// Source window (TPU interpreter: read at the wait; generic: already copied).
    src: Rc<View>,
    /// Destination window.
    dst: Rc<View>,
    /// Whether the copy still has to happen (TPU interpreter) or happened at the start.
    deferred: bool,
}

impl<'p> Machine<'p> {
    /// One side of `pltpu.make_async_copy(src, dst, sem)`, with the interpreters' measured
    /// timing (jax 0.10.2): the TPU interpreter copies at the `.wait()` (a read of the slot
    /// between start and wait sees its old contents; an out-of-range source raises
    /// `IndexError` at the wait), the generic interpreter copies at the `.start()` (and clamps
    /// like any of its dynamic slices). A wait with no copy issued on its semaphore blocks the
    /// TPU interpreter forever (measured: a hang), reported as [`ErrorKind::StepLimit`], the
    /// executor's timeout. A copy started and never waited for is dropped, as measured.
    pub(super) fn async_copy(
        &mut self,
        src: &'p RExpr,
        dst: &'p RExpr,
        sem: &'p RExpr,
        op: lang::pallas::CopyOp,
    ) -> SimResult<()> {
        let mut refs = Vec::with_capacity(3);
        for (what, e) in [("source", src), ("destination", dst), ("semaphore", sem)] {
            match self.eval(e)? {
                Value::Ref(v) => refs.push(v),
                other @ (Value::Unbound
                | Value::None
                | Value::Int(_)
                | Value::Float(_)
                | Value::Bool(_)
                | Value::Arr(_)
                | Value::Ds { .. }
                | Value::Tuple(_)
                | Value::Func(_)) => {
                    return Err(te(
                        ErrorKind::TypeError,
                        format!(
                            "make_async_copy: the {what} must be a Ref, got {}",
                            describe(&other)
                        ),
                    ));
                }
            }
        }
        let (src, dst, sem) = (refs[0].clone(), refs[1].clone(), refs[2].clone());
        let is_sem = |v: &View| self.bufs.get(root_buffer(v)).is_some_and(|b| b.sem);
        if is_sem(&src) || is_sem(&dst) || !is_sem(&sem) || sem.rank != 0 {
            return Err(te(
                ErrorKind::TypeError,
                "make_async_copy needs data Refs and one DMA semaphore (a semaphore array \
                 indexed down to one element)",
            ));
        }
        if src.shape() != dst.shape() || src.cat.dtype() != dst.cat.dtype() {
            return Err(te(
                ErrorKind::ValueError,
                format!(
                    "make_async_copy between Refs of different types: {}{:?} and {}{:?}",
                    src.cat.name(),
                    src.shape(),
                    dst.cat.name(),
                    dst.shape()
                ),
            ));
        }
        if self.tracing {
            return Ok(());
        }
        let key = match self.access(&sem, false)? {
            Access::Strided { buf, offset, .. } => (buf, offset),
            Access::Gather { buf, offsets } => (buf, offsets.first().copied().unwrap_or(0)),
        };
        match op {
            lang::pallas::CopyOp::Start => {
                let deferred = !self.generic;
                if !deferred {
                    self.copy(&src, &dst)?;
                }
                self.dma
                    .entry(key)
                    .or_default()
                    .push_back(Pending { src, dst, deferred });
            }
            lang::pallas::CopyOp::Wait => {
                let Some(p) = self.dma.get_mut(&key).and_then(|q| q.pop_front()) else {
                    return Err(SimError::new(
                        SimStage::Run,
                        ErrorKind::StepLimit,
                        "a DMA wait on a semaphore no copy signals: the TPU interpreter \
                         blocks forever",
                    ));
                };
                if p.src.shape().numel() != dst.shape().numel() {
                    return Err(SimError::unsupported(
                        "a DMA wait for a copy of another size than the one issued",
                    ));
                }
                if p.deferred {
                    self.copy(&p.src, &p.dst)?;
                }
            }
        }
        Ok(())
    }

    /// Copies the elements of `src` into `dst` (same shape and dtype).
    fn copy(&mut self, src: &View, dst: &View) -> SimResult<()> {
        let a = self.read(src)?;
        self.write(dst, &a)
    }
}
