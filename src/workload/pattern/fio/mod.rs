//! fio's draws: which I/O a job from a fio job file does next, decided as
//! fio 3.33 decides it, from fio's own generators and seeds (`taus`), so
//! the job moves fio's I/Os: the same directions, sizes, offsets and
//! files, in the same order, and the same number of them.
//!
//! Per I/O, as fio's `fill_io_u`: the file (`file_service_type`: round
//! robin by default, one after another, or at random; `:N` I/Os per
//! turn), the direction (a mixed job keeps one for a while: it draws
//! again once as many I/Os of it have been issued as fio's `rwmix_issues`
//! says), the offset (sequential: each direction has its own position in
//! each file; random: a block of the smallest size, moved on to the next
//! free one while the random map says it is done), the size (bssplit's
//! draw, only among the sizes that still fit), and last the random map's
//! mark, which cuts an I/O where a done block begins. A file is done when
//! its next I/O cannot be had (its end, or its map full); a pass ends when
//! it has moved `size` bytes or every file is done; then, with `loops`,
//! the files start over (randrepeat=1 draws the same numbers again),
//! and a time-based job starts over until its time is up.
mod map;
pub mod taus;

use serde::Serialize;

use super::access::Op;
use map::BlockMap;
pub use taus::{Purpose, Seeds, Taus88};

/// What a job from a fio job file draws its I/O from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FioDraws {
    pub seeds: Seeds,
    pub direction: Direction,
    /// rw=rand*: random offsets; otherwise sequential.
    pub random: bool,
    /// Random offsets keep fio's random map (norandommap=0).
    pub random_map: bool,
    /// The block sizes and fio's whole percentages (bssplit; one size
    /// at 100 for bs=), in fio's order: by percentage, rising.
    pub sizes: Vec<(u64, u32)>,
    /// Bytes a pass moves over all the files (fio's size).
    pub size: u64,
    pub loops: u32,
    pub time_based: bool,
    pub files: Vec<FioFile>,
    pub service: Service,
    /// verify=: fio seeds the write sizes' generator as the reads'.
    pub verify: bool,
    /// The file (of `files`) a run of the job does the I/O of: a job of
    /// several files runs them one after another, each run drawing the
    /// whole job's I/Os and doing its file's.
    pub serving: usize,
}

/// One of a job's files, as fio sizes it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FioFile {
    /// Its index among the plan's files.
    pub file: usize,
    /// The bytes a pass does on it (fio's io_size).
    pub io_size: u64,
    /// Its size (larger where another job's file of the same name is).
    pub size: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Read,
    Write,
    /// rw=rw/randrw with this rwmixread.
    Mix(u32),
}

/// fio's `file_service_type`, with its `:N` (I/Os per turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Service {
    RoundRobin(u32),
    Sequential,
    Random(u32),
}

/// One drawn I/O: on which of the job's files, random or sequential,
/// and whether a sequential one started over at the file's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drawn {
    pub file: usize,
    pub op: Op,
    pub random: bool,
    pub wrapped: bool,
}

const READ: usize = 0;
const WRITE: usize = 1;

/// A file's state over a pass.
#[derive(Debug, Clone)]
struct FileState {
    map: Option<BlockMap>,
    /// The next sequential offset, per direction.
    position: [u64; 2],
    done: bool,
}

/// fio's generators of one job.
#[derive(Debug, Clone)]
struct Generators {
    offsets: Taus88,
    sizes: [Taus88; 2],
    mix: Taus88,
    files: Taus88,
}

impl Generators {
    fn new(draws: &FioDraws) -> Generators {
        let seeds = &draws.seeds;
        let read_sizes = seeds.generator(Purpose::ReadSizes);
        Generators {
            offsets: seeds.generator(Purpose::Block),
            sizes: [
                read_sizes.clone(),
                match draws.verify {
                    true => read_sizes,
                    false => seeds.generator(Purpose::WriteSizes),
                },
            ],
            mix: seeds.generator(Purpose::Mix),
            files: seeds.generator(Purpose::File),
        }
    }
}

/// The direction of a mixed job: kept until as many I/Os of it have been
/// issued as `switch_at` (fio's rwmix_ddir, io_issues, rwmix_issues).
#[derive(Debug, Clone, Default)]
struct Mix {
    current: usize,
    issued: [u64; 2],
    switch_at: u64,
}

/// Which file is served, and for how many more I/Os.
#[derive(Debug, Clone, Default)]
struct Turn {
    current: Option<usize>,
    left: u32,
    next: usize,
    done_files: usize,
}

/// The state of a job's draws.
#[derive(Debug, Clone)]
pub struct Draws {
    spec: FioDraws,
    generators: Generators,
    files: Vec<FileState>,
    mix: Mix,
    turn: Turn,
    smallest: u64,
    largest: u64,
    pass_bytes: u64,
    passes: u32,
    over: bool,
}

impl Draws {
    pub fn new(spec: &FioDraws) -> Draws {
        let sizes = spec.sizes.iter().map(|&(size, _)| size);
        let files = spec
            .files
            .iter()
            .map(|_| FileState {
                map: None,
                position: [0; 2],
                done: false,
            })
            .collect();
        let mut draws = Draws {
            generators: Generators::new(spec),
            files,
            mix: Mix::default(),
            turn: Turn::default(),
            smallest: sizes.clone().min().unwrap_or(1).max(1),
            largest: sizes.max().unwrap_or(1),
            pass_bytes: 0,
            passes: 0,
            over: false,
            spec: spec.clone(),
        };
        for index in 0..draws.files.len() {
            draws.files[index].map = draws.new_map(index);
        }
        draws
    }

    /// The random map of file `index` (fio's: one bit per block of the
    /// smallest size over the bytes it does).
    fn new_map(&self, index: usize) -> Option<BlockMap> {
        (self.spec.random && self.spec.random_map).then(|| BlockMap::new(self.last_block(index)))
    }

    /// The next I/O of the job; None once fio would end it.
    pub fn next_io(&mut self) -> Option<Drawn> {
        loop {
            if self.over {
                return None;
            }
            let pass_done = !self.spec.time_based && self.pass_bytes >= self.spec.size;
            if pass_done || self.turn.done_files >= self.files.len() {
                self.next_pass();
                continue;
            }
            let file = self.next_file();
            match self.fill(file) {
                Some(drawn) => {
                    self.pass_bytes += drawn.op.len;
                    self.mix.issued[usize::from(drawn.op.write)] += 1;
                    return Some(drawn);
                }
                None => {
                    self.files[file].done = true;
                    self.turn.done_files += 1;
                }
            }
        }
    }

    /// The next I/O on the file the run serves, the other files' draws
    /// made and passed over.
    pub fn next_served(&mut self) -> Option<Drawn> {
        let file = self.spec.serving;
        std::iter::from_fn(|| self.next_io()).find(|drawn| drawn.file == file)
    }

    /// The bytes a whole run does on each file (a size-bound job's).
    pub fn bytes_per_file(spec: &FioDraws) -> Vec<u64> {
        let mut draws = Draws::new(spec);
        let mut bytes = vec![0; spec.files.len()];
        while let Some(drawn) = draws.next_io() {
            bytes[drawn.file] += drawn.op.len;
        }
        bytes
    }

    /// Ends a pass: the job ends after its loops (a time-based one never
    /// does); otherwise every file starts over, and with randrepeat=1 the
    /// generators too, as fio's clear_io_state does.
    fn next_pass(&mut self) {
        self.passes += 1;
        if !self.spec.time_based && self.passes >= self.spec.loops {
            self.over = true;
            return;
        }
        for index in 0..self.files.len() {
            self.reset_file(index);
            self.files[index].done = false;
        }
        self.turn.done_files = 0;
        self.turn.current = None;
        self.mix.switch_at = 0;
        self.pass_bytes = 0;
        if self.spec.seeds.repeatable {
            self.generators = Generators::new(&self.spec);
        }
    }

    fn reset_file(&mut self, index: usize) {
        let file = &mut self.files[index];
        file.position = [0; 2];
        if let Some(map) = &mut file.map {
            map.reset();
        }
    }

    /// fio's __get_next_file: the current file while its turn lasts
    /// (sequential service: until it is done), else the next one not done.
    fn next_file(&mut self) -> usize {
        let turn = &mut self.turn;
        if let Some(current) = turn.current.filter(|&c| !self.files[c].done) {
            if self.spec.service == Service::Sequential {
                return current;
            }
            if turn.left > 0 {
                turn.left -= 1;
                return current;
            }
        }
        let count = self.files.len();
        let (file, per_turn) = match self.spec.service {
            Service::Random(per_turn) => loop {
                let file = self.generators.files.scaled(count as u64) as usize;
                if !self.files[file].done {
                    break (file, per_turn);
                }
            },
            service => loop {
                let file = turn.next;
                turn.next = (turn.next + 1) % count;
                if !self.files[file].done {
                    let per_turn = match service {
                        Service::RoundRobin(n) => n,
                        _ => 1,
                    };
                    break (file, per_turn);
                }
            },
        };
        turn.current = Some(file);
        turn.left = per_turn.saturating_sub(1);
        file
    }

    /// fio's fill_io_u on file `index`: None when the file has no next I/O.
    fn fill(&mut self, index: usize) -> Option<Drawn> {
        let direction = self.direction();
        let write = direction == WRITE;
        let file = self.spec.files[index];
        let (offset, wrapped) = match self.spec.random {
            true => (self.random_block(index)? * self.smallest, false),
            false => self.sequential_offset(index, direction)?,
        };
        if offset >= file.io_size || offset >= file.size {
            return None;
        }
        let mut len = self.block_size(direction, offset, file.io_size)?;
        if offset + len > file.size {
            return None;
        }
        if let Some(map) = &mut self.files[index].map {
            let blocks = len.div_ceil(self.smallest);
            len = len.min(map.mark_run(offset / self.smallest, blocks) * self.smallest);
        }
        self.files[index].position[direction] = offset + len;
        let op = Op { write, offset, len };
        Some(Drawn {
            file: index,
            op,
            random: self.spec.random,
            wrapped,
        })
    }

    /// fio's get_rw_ddir: a mixed job draws a direction once the current
    /// one has had its share of I/Os.
    fn direction(&mut self) -> usize {
        let read_pct = match self.spec.direction {
            Direction::Read => return READ,
            Direction::Write => return WRITE,
            Direction::Mix(read_pct) => read_pct,
        };
        let mix = &mut self.mix;
        if mix.issued[mix.current] >= mix.switch_at {
            let drawn = match self.generators.mix.percent() <= read_pct {
                true => READ,
                false => WRITE,
            };
            if drawn != mix.current {
                let share = match drawn {
                    READ => read_pct,
                    _ => 100 - read_pct,
                };
                mix.switch_at = mix.issued[mix.current] * u64::from(share) / 100;
            }
            mix.current = drawn;
        }
        mix.current
    }

    /// fio's last_block: the blocks a random offset is drawn among.
    fn last_block(&self, index: usize) -> u64 {
        let file = self.spec.files[index];
        file.io_size.min(file.size) / self.smallest
    }

    /// fio's get_next_rand_block: a random block, moved on to the next free
    /// one while the map says it is done; a time-based job starts the file
    /// over when its map is full.
    fn random_block(&mut self, index: usize) -> Option<u64> {
        if let Some(block) = self.random_offset(index) {
            return Some(block);
        }
        if !self.spec.time_based {
            return None;
        }
        self.reset_file(index);
        self.random_offset(index)
    }

    fn random_offset(&mut self, index: usize) -> Option<u64> {
        let last = self.last_block(index);
        if last == 0 {
            return None;
        }
        let block = self.generators.offsets.scaled(last);
        match &self.files[index].map {
            None => Some(block),
            Some(map) if !map.is_done(block) => Some(block),
            Some(map) => map.next_free_after(block),
        }
    }

    /// fio's get_next_seq_offset: the direction's position; a time-based
    /// job of one file goes round to the start at its end.
    fn sequential_offset(&mut self, index: usize, direction: usize) -> Option<(u64, bool)> {
        let file = self.spec.files[index];
        let position = &mut self.files[index].position[direction];
        let wrapped =
            *position >= file.io_size && self.spec.time_based && self.spec.files.len() == 1;
        if wrapped {
            *position = 0;
        }
        (*position < file.size).then_some((*position, wrapped))
    }

    /// fio's get_next_buflen: one size, or a draw among the bssplit sizes
    /// (in their order, each up to its share) until one fits in the
    /// file's bytes from `offset`.
    fn block_size(&mut self, direction: usize, offset: u64, io_size: u64) -> Option<u64> {
        let fits = |len: u64| offset + len <= io_size;
        if self.smallest == self.largest {
            return Some(self.smallest);
        }
        if !fits(self.smallest) {
            return None;
        }
        let limit = u64::from(u32::MAX) / 100;
        loop {
            let r = u64::from(self.generators.sizes[direction].draw());
            let mut len = 0;
            let mut share = 0u64;
            for &(size, pct) in self.spec.sizes.iter().filter(|(_, pct)| *pct > 0) {
                len = size;
                share += u64::from(pct);
                if r / share <= limit && fits(size) {
                    break;
                }
            }
            len = match self.smallest.is_power_of_two() {
                true => len & !(self.smallest - 1),
                false => len - len % self.smallest,
            }
            .min(self.largest);
            if fits(len) {
                return Some(len);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(direction: Direction, sizes: Vec<(u64, u32)>, size: u64) -> FioDraws {
        FioDraws {
            seeds: Seeds {
                rand_seed: 0x89,
                thread: 1,
                repeatable: true,
            },
            direction,
            random: true,
            random_map: true,
            sizes,
            size,
            loops: 1,
            time_based: false,
            files: vec![FioFile {
                file: 0,
                io_size: size,
                size,
            }],
            service: Service::RoundRobin(1),
            verify: false,
            serving: 0,
        }
    }

    fn all(spec: &FioDraws) -> Vec<Drawn> {
        let mut draws = Draws::new(spec);
        std::iter::from_fn(|| draws.next_io()).collect()
    }

    /// With the map, a pass does every block once, cutting I/Os where a
    /// done block begins, and moves exactly `size` bytes.
    #[test]
    fn the_map_does_each_block_once() {
        let mixed = spec(Direction::Mix(70), vec![(4096, 50), (65536, 50)], 8 << 20);
        let ops = all(&mixed);
        let mut done = vec![false; (8 << 20) / 4096];
        for drawn in &ops {
            let Op { offset, len, .. } = drawn.op;
            assert!(
                offset % 4096 == 0 && len % 4096 == 0 && len <= 65536,
                "{drawn:?}"
            );
            for block in offset / 4096..(offset + len) / 4096 {
                assert!(!done[block as usize], "block {block} twice");
                done[block as usize] = true;
            }
        }
        assert!(done.iter().all(|&d| d));
        let cut = ops
            .iter()
            .filter(|d| d.op.len != 4096 && d.op.len != 65536)
            .count();
        assert!(cut > 0, "some 64k I/Os cut short");
        // Without it, the I/Os are the drawn sizes and overlap.
        let free = FioDraws {
            random_map: false,
            ..mixed.clone()
        };
        let ops = all(&free);
        assert!(ops.iter().all(|d| [4096, 65536].contains(&d.op.len)));
        assert!(ops.iter().map(|d| d.op.len).sum::<u64>() >= 8 << 20);
    }

    /// A mixed job keeps a direction for a while; over the run its reads
    /// come near rwmixread.
    #[test]
    fn a_mix_holds_its_direction_and_its_share() {
        let ops = all(&spec(Direction::Mix(70), vec![(4096, 100)], 16 << 20));
        let reads = ops.iter().filter(|d| !d.op.write).count() as f64 / ops.len() as f64;
        assert!((0.65..0.75).contains(&reads), "{reads}");
        let runs = ops
            .windows(2)
            .filter(|w| w[0].op.write != w[1].op.write)
            .count();
        assert!(runs < ops.len() / 2, "{runs} switches in {}", ops.len());
    }

    /// Sequential: each direction has its own position; the job ends at
    /// the file's end (size-bound), or goes round (time-based).
    #[test]
    fn sequential_positions_are_per_direction() {
        let mut s = spec(Direction::Mix(50), vec![(4096, 100)], 1 << 20);
        s.random = false;
        let ops = all(&s);
        for write in [false, true] {
            let offsets: Vec<u64> = ops
                .iter()
                .filter(|d| d.op.write == write)
                .map(|d| d.op.offset)
                .collect();
            assert!(
                offsets
                    .iter()
                    .enumerate()
                    .all(|(i, &o)| o == i as u64 * 4096),
                "{offsets:?}"
            );
        }
        assert_eq!(ops.iter().map(|d| d.op.len).sum::<u64>(), 1 << 20);
        s.direction = Direction::Read;
        s.time_based = true;
        let mut draws = Draws::new(&s);
        let ops: Vec<Drawn> = (0..600).map(|_| draws.next_io().unwrap()).collect();
        assert_eq!((ops[256].op.offset, ops[256].wrapped), (0, true));
    }

    /// loops=2 with randrepeat=1 does the same I/Os twice.
    #[test]
    fn loops_repeat_the_same_draws() {
        let mut s = spec(Direction::Read, vec![(4096, 50), (16384, 50)], 1 << 20);
        let once = all(&s);
        s.loops = 2;
        let twice = all(&s);
        assert_eq!(twice.len(), 2 * once.len());
        assert_eq!(twice[..once.len()], twice[once.len()..]);
    }

    /// Files in turn: round robin alternates, sequential does one after
    /// the other, and each file moves its share.
    #[test]
    fn files_are_served_in_fio_s_order() {
        let mut s = spec(Direction::Write, vec![(4096, 100)], 3 << 20);
        s.random = false;
        s.files = (0..3)
            .map(|file| FioFile {
                file,
                io_size: 1 << 20,
                size: 1 << 20,
            })
            .collect();
        let order: Vec<usize> = all(&s).iter().map(|d| d.file).take(6).collect();
        assert_eq!(order, [0, 1, 2, 0, 1, 2]);
        s.service = Service::RoundRobin(2);
        let order: Vec<usize> = all(&s).iter().map(|d| d.file).take(6).collect();
        assert_eq!(order, [0, 0, 1, 1, 2, 2]);
        s.service = Service::Sequential;
        let ops = all(&s);
        assert!(ops.windows(2).all(|w| w[0].file <= w[1].file));
        assert_eq!(Draws::bytes_per_file(&s), [1 << 20; 3]);
        s.serving = 1;
        let mut draws = Draws::new(&s);
        let served: Vec<Drawn> = std::iter::from_fn(|| draws.next_served()).collect();
        assert!(served.len() == 256 && served.iter().all(|d| d.file == 1));
    }
}
