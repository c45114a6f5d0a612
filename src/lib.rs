//! integrador: integrates monitoring data from independent collectors into
//! one Pajé trace (L. M. Schnorr, 2005). Data flows one way:
//! decode (`sources/` crates) → clock sync ([`clock`]) → unify
//! ([`registry`], [`hierarchy`]) → convert ([`convert`]) → merge ([`merge`])
//! → sinks ([`sink`]: one replay of the model events, then each output's
//! encoder, such as [`paje::writer`]).
#![warn(missing_docs)]

pub mod cli;
pub mod clock;
pub mod clockfit;
pub mod clocks;
pub mod color;
pub mod convert;
pub mod error;
pub mod eventmap;
pub mod hierarchy;
pub mod identity;
pub mod input;
pub mod merge;
pub mod messages;
pub mod model;
pub mod order;
pub mod otf2;
pub mod outdir;
pub mod output;
pub mod outputs;
pub mod page;
pub mod paje;
pub mod paraver;
pub mod prefetch;
pub mod progress;
pub mod record;
pub mod recurring;
pub mod registry;
pub mod report;
pub mod run;
pub mod scale;
pub mod series;
pub mod sink;
pub mod sniff;
pub mod source;
pub mod summary;
pub mod tables;
pub mod time;
pub mod timeline;
