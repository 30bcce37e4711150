//! The MPI transport (OpenMPI, MPICH, ... through rsmpi). MPI is called
//! from the main thread only; workloads' own threads never touch it, hence
//! `Threading::Funneled`.
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

pub struct MpiLink {
    world: SimpleCommunicator,
    /// Dropped after `world`: its drop is MPI_Finalize.
    _universe: Universe,
}

impl MpiLink {
    pub fn init() -> anyhow::Result<MpiLink> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or_else(|| anyhow::anyhow!("MPI was initialised twice"))?;
        let world = universe.world();
        Ok(MpiLink {
            world,
            _universe: universe,
        })
    }

    pub fn rank(&self) -> u32 {
        self.world.rank() as u32
    }

    pub fn size(&self) -> u32 {
        self.world.size() as u32
    }

    pub fn barrier(&self) {
        self.world.barrier();
    }

    pub fn min_all(&self, value: u32) -> u32 {
        let mut least = value;
        self.world
            .all_reduce_into(&value, &mut least, SystemOperation::min());
        least
    }

    /// `root`'s bytes on every rank (the others pass anything, e.g. empty).
    pub fn broadcast(&self, root: u32, bytes: Vec<u8>) -> Vec<u8> {
        let root = self.world.process_at_rank(root as i32);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = bytes;
        buf.resize(len as usize, 0);
        root.broadcast_into(&mut buf[..]);
        buf
    }

    /// Every rank's bytes, in rank order, on rank 0; None elsewhere.
    pub fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0);
        let len = bytes.len() as mpi::Count;
        if self.world.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(bytes);
            return None;
        }
        let mut counts: Vec<mpi::Count> = vec![0; self.size() as usize];
        root.gather_into_root(&len, &mut counts[..]);
        let offsets: Vec<mpi::Count> = counts
            .iter()
            .scan(0, |at, &count| {
                let offset = *at;
                *at += count;
                Some(offset)
            })
            .collect();
        let mut all = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        let mut partition = PartitionMut::new(&mut all[..], &counts[..], &offsets[..]);
        root.gather_varcount_into_root(bytes, &mut partition);
        let pieces = counts
            .iter()
            .zip(&offsets)
            .map(|(&count, &offset)| all[offset as usize..(offset + count) as usize].to_vec())
            .collect();
        Some(pieces)
    }
}
