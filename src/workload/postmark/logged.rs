//! PostMark's creates and deletes recorded in a sync log (`--sync-log`),
//! as a [`FileOps`] wrapper: the engine and the system calls stay exactly
//! PostMark's, and each create or delete returns only once its record is
//! written (and synced, per the log's batch), as a file server's does
//! when it keeps a metadata database.
use super::engine::FileOps;
use super::pool::FileSlot;
use crate::workload::synclog::{LogOp, SyncLog};

pub struct Logged<'l, F> {
    files: F,
    log: Option<&'l SyncLog>,
    /// `t<k>/` with several instances, so records name distinct files.
    prefix: String,
}

impl<'l, F> Logged<'l, F> {
    pub fn new(files: F, log: Option<&'l SyncLog>, prefix: String) -> Self {
        Logged { files, log, prefix }
    }

    /// The wrapped file operations.
    pub fn inner(&self) -> &F {
        &self.files
    }

    fn record(&self, op: LogOp, file: &FileSlot) -> anyhow::Result<()> {
        let Some(log) = self.log else {
            return Ok(());
        };
        log.record(op, &self.name(file))
    }

    /// `[t<k>/][s<sub>/]<number>`: the file relative to its location.
    fn name(&self, file: &FileSlot) -> String {
        match file.subdir {
            Some(sub) => format!("{}s{sub}/{}", self.prefix, file.number),
            None => format!("{}{}", self.prefix, file.number),
        }
    }
}

impl<F: FileOps> FileOps for Logged<'_, F> {
    fn create(&mut self, file: &FileSlot, data: &[u8]) -> anyhow::Result<()> {
        self.files.create(file, data)?;
        self.record(LogOp::Create, file)
    }

    fn read(&mut self, file: &FileSlot) -> anyhow::Result<()> {
        self.files.read(file)
    }

    fn append(&mut self, file: &FileSlot, data: &[u8]) -> anyhow::Result<()> {
        self.files.append(file, data)
    }

    fn delete(&mut self, file: &FileSlot) -> anyhow::Result<()> {
        self.files.delete(file)?;
        self.record(LogOp::Delete, file)
    }
}
