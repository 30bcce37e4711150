//! The ranks of a job and the collective steps fsbench takes together.
//!
//! The rule that keeps a failing rank from leaving the others in a barrier
//! forever: every step the ranks take together starts with an *agreement*
//! (an all-reduce of "the lowest rank that failed, if any"), and a rank
//! that fails anywhere takes exactly one more agreement, on its way out.
//! MPI matches collectives by order, not by call site, so that one
//! agreement meets whatever step the others are waiting in, they all learn
//! who failed, and nobody takes another step.
use serde::{Deserialize, Serialize};

#[cfg(not(feature = "mpi"))]
use crate::console::stderr_line;
use crate::error::{Interrupted, UsageError};

/// A rank failed; every rank of the job returns this from the agreement
/// that revealed it.
#[derive(Debug, Clone, thiserror::Error, Serialize, Deserialize)]
#[error("rank {rank} on host {host}: {message}")]
pub struct RankFailed {
    pub rank: u32,
    pub host: String,
    pub message: String,
    /// The exit code the failing rank would have had on its own.
    pub exit_code: i32,
}

pub struct Team {
    rank: u32,
    size: u32,
    link: Link,
}

enum Link {
    Solo,
    #[cfg(feature = "mpi")]
    Mpi(super::mpi::MpiLink),
}

/// Variables a launcher sets in every process it starts: OpenMPI's mpirun,
/// PMI (MPICH's mpiexec, `srun --mpi=pmi2`) and PMIx (`srun --mpi=pmix`).
const LAUNCHER_VARS: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"];

pub(super) fn launched_by_mpi() -> bool {
    LAUNCHER_VARS.iter().any(|v| std::env::var_os(v).is_some())
}

impl Team {
    pub fn solo() -> Team {
        Team {
            rank: 0,
            size: 1,
            link: Link::Solo,
        }
    }

    /// The job this process belongs to: MPI's when a launcher started it
    /// (and the build has MPI), else a team of one.
    pub fn launch() -> anyhow::Result<Team> {
        if !launched_by_mpi() {
            return Ok(Team::solo());
        }
        Self::launch_mpi()
    }

    #[cfg(feature = "mpi")]
    fn launch_mpi() -> anyhow::Result<Team> {
        let link = super::mpi::MpiLink::init()?;
        Ok(Team {
            rank: link.rank(),
            size: link.size(),
            link: Link::Mpi(link),
        })
    }

    #[cfg(not(feature = "mpi"))]
    fn launch_mpi() -> anyhow::Result<Team> {
        stderr_line!(
            "fsbench: warning: this build has no MPI support (cargo feature `mpi`): \
             every process mpirun started runs on its own"
        );
        Ok(Team::solo())
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }

    pub fn size(&self) -> u32 {
        self.size
    }

    /// Waits for every rank; only for the start, before anything can fail.
    pub fn barrier(&self) {
        match &self.link {
            Link::Solo => {}
            #[cfg(feature = "mpi")]
            Link::Mpi(link) => link.barrier(),
        }
    }

    fn min_all(&self, value: u32) -> u32 {
        match &self.link {
            Link::Solo => value,
            #[cfg(feature = "mpi")]
            Link::Mpi(link) => link.min_all(value),
        }
    }

    #[cfg_attr(not(feature = "mpi"), allow(unused_variables))]
    fn broadcast(&self, root: u32, bytes: Vec<u8>) -> Vec<u8> {
        match &self.link {
            Link::Solo => bytes,
            #[cfg(feature = "mpi")]
            Link::Mpi(link) => link.broadcast(root, bytes),
        }
    }

    fn gather_bytes(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        match &self.link {
            Link::Solo => Some(vec![bytes.to_vec()]),
            #[cfg(feature = "mpi")]
            Link::Mpi(link) => link.gather(bytes),
        }
    }

    /// The agreement: `outcome` on every rank if all succeeded, else the
    /// lowest failing rank's error (as [`RankFailed`]) on every rank. A
    /// failure agreed on already stands: every rank has it and takes no
    /// more steps.
    pub fn agree<T>(&self, outcome: anyhow::Result<T>) -> anyhow::Result<T> {
        let agreed = matches!(&outcome, Err(e) if e.is::<RankFailed>());
        if self.size == 1 || agreed {
            return outcome;
        }
        let mine = match &outcome {
            Ok(_) => self.size,
            Err(_) => self.rank,
        };
        let failed = self.min_all(mine);
        if failed == self.size {
            return outcome;
        }
        let report = match (&outcome, failed == self.rank) {
            (Err(e), true) => serde_json::to_vec(&self.failure(e)).unwrap_or_default(),
            _ => Vec::new(),
        };
        let report = self.broadcast(failed, report);
        let failure = serde_json::from_slice(&report).unwrap_or_else(|_| RankFailed {
            rank: failed,
            host: "?".into(),
            message: "failed (its report was unreadable)".into(),
            exit_code: 1,
        });
        Err(anyhow::Error::new(failure))
    }

    fn failure(&self, e: &anyhow::Error) -> RankFailed {
        RankFailed {
            rank: self.rank,
            host: crate::storage::env::host_name(),
            message: format!("{e:#}"),
            exit_code: exit_code_of(e),
        }
    }

    /// Rank 0's bytes on every rank, after an agreement on `outcome`.
    pub fn share_from_root(&self, outcome: anyhow::Result<Vec<u8>>) -> anyhow::Result<Vec<u8>> {
        let bytes = self.agree(outcome)?;
        Ok(self.broadcast(0, bytes))
    }

    /// Every rank's bytes on rank 0 (None elsewhere), after an agreement
    /// on `outcome`.
    pub fn gather(&self, outcome: anyhow::Result<Vec<u8>>) -> anyhow::Result<Option<Vec<Vec<u8>>>> {
        let bytes = self.agree(outcome)?;
        Ok(self.gather_bytes(&bytes))
    }
}

/// The exit code an error means (see `cli`): 2 bad usage, 128+N a signal,
/// 1 anything else.
pub fn exit_code_of(e: &anyhow::Error) -> i32 {
    if let Some(failed) = e.downcast_ref::<RankFailed>() {
        failed.exit_code
    } else if let Some(interrupted) = e.downcast_ref::<Interrupted>() {
        128 + interrupted.signal
    } else if e.downcast_ref::<UsageError>().is_some() {
        2
    } else {
        1
    }
}
