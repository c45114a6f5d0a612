//! Converters: records of one decoder crate → model events, following the
//! thesis' event-mapping tables (appendix C). Each converter is one
//! [`EventSource`](crate::source::EventSource).

pub mod ganglia;
pub mod mpi;
pub mod os;
pub mod pcp;
pub mod rastro;
pub mod sched;
