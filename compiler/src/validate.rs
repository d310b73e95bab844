//! placeholder: trace-time validation (written next)
