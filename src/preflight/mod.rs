//! Preflight (docs/contracts.md §20.4): whether the agent CLIs a review dispatches are there — checked by
//! `arev run` before it creates a run dir — and, for `arev doctor`, whether git and each
//! CLI run, at the version arev is tested with, with credentials, under a config that loads.
mod agents;
mod doctor;
mod endpoint;
mod prove;

pub use agents::{
    check_agents, check_plan, install_command, tested_version, PreflightError, Tested,
};
pub use doctor::{doctor, Check, DoctorConfig, Level};
pub use prove::check_prove;
