//! PostMark's file table: 2 × `number` slots, each holding one live file
//! (where it is, its name number and its recorded size) or nothing. The
//! slot a new file takes and the way a live file is picked decide the
//! whole operation sequence, so both follow PostMark exactly.
use super::rng::PostmarkRng;

/// One live file. `size` 0 marks a free slot (PostMark files are never
/// empty: the low size bound is at least 1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileSlot {
    pub size: u32,
    /// The file name: PostMark numbers files 1, 2, 3... in creation order.
    pub number: u32,
    /// Index of the location (0 when there is one or none).
    pub location: u32,
    /// `s<N>/` under the location, when more than one subdirectory is used.
    pub subdir: Option<u32>,
}

impl FileSlot {
    pub fn is_live(&self) -> bool {
        self.size > 0
    }
}

pub struct Pool {
    slots: Vec<FileSlot>,
    free: FreeSlots,
    /// Where PostMark looks first for a free slot.
    cursor: usize,
}

impl Pool {
    pub fn new(number: u32) -> Self {
        let count = 2 * number as usize;
        Pool {
            slots: vec![FileSlot::default(); count],
            free: FreeSlots::all(count),
            cursor: 0,
        }
    }

    /// The slot for a new file: the one at the cursor if it is free, else
    /// the first free one from the start; None when all 2N are live.
    pub fn free_slot(&mut self) -> Option<usize> {
        let index = match self.slots.get(self.cursor) {
            Some(slot) if !slot.is_live() => self.cursor,
            _ => self.free.first()?,
        };
        self.cursor = index + 1;
        Some(index)
    }

    /// A live file chosen as PostMark does: draw a slot among all 2N
    /// until a live one comes up. The caller guarantees one is live.
    #[inline]
    pub fn pick_live(&self, rng: &mut PostmarkRng) -> usize {
        let table = self.slots.len() as u32;
        loop {
            let index = rng.below(table) as usize;
            if self.slots[index].is_live() {
                return index;
            }
        }
    }

    pub fn slot(&self, index: usize) -> &FileSlot {
        &self.slots[index]
    }

    /// Puts a new (live) file in slot `index`.
    pub fn fill(&mut self, index: usize, file: FileSlot) {
        debug_assert!(file.is_live());
        self.slots[index] = file;
        self.free.take(index);
    }

    /// Records bytes appended to the file in slot `index`.
    pub fn grow(&mut self, index: usize, bytes: u32) {
        self.slots[index].size += bytes;
    }

    pub fn release(&mut self, index: usize) {
        self.slots[index] = FileSlot::default();
        self.free.release(index);
    }

    /// Number of slots (2 × number); PostMark's final deletion walks them
    /// in this order.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }
}

/// The free slots as bits, with a summary bit per 64-slot word, so the
/// first free slot is found without walking the table. (PostMark walks
/// it, which makes its creates slower as the front of the table fills.)
struct FreeSlots {
    words: Vec<u64>,
    /// Bit `w` set: `words[w]` has a free slot.
    summary: Vec<u64>,
}

impl FreeSlots {
    fn all(count: usize) -> Self {
        let mut free = FreeSlots {
            words: vec![0; count.div_ceil(64)],
            summary: vec![0; count.div_ceil(64 * 64)],
        };
        (0..count).for_each(|i| free.release(i));
        free
    }

    fn take(&mut self, index: usize) {
        let word = index / 64;
        self.words[word] &= !(1 << (index % 64));
        if self.words[word] == 0 {
            self.summary[word / 64] &= !(1 << (word % 64));
        }
    }

    fn release(&mut self, index: usize) {
        let word = index / 64;
        self.words[word] |= 1 << (index % 64);
        self.summary[word / 64] |= 1 << (word % 64);
    }

    fn first(&self) -> Option<usize> {
        let group = self.summary.iter().position(|&bits| bits != 0)?;
        let word = group * 64 + self.summary[group].trailing_zeros() as usize;
        Some(word * 64 + self.words[word].trailing_zeros() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(size: u32) -> FileSlot {
        FileSlot {
            size,
            ..FileSlot::default()
        }
    }

    #[test]
    fn cursor_then_first_free_slot() {
        let mut pool = Pool::new(2);
        for expected in 0..4 {
            let index = pool.free_slot().unwrap();
            assert_eq!(index, expected);
            pool.fill(index, live(1));
        }
        assert_eq!(pool.free_slot(), None, "all 2N slots are live");
        pool.release(2);
        pool.release(1);
        // The cursor is past the end: scan from the start.
        assert_eq!(pool.free_slot(), Some(1));
        pool.fill(1, live(1));
        // The cursor now points at slot 2, which is free.
        assert_eq!(pool.free_slot(), Some(2));
    }

    #[test]
    fn picks_only_live_files() {
        let mut pool = Pool::new(4);
        pool.fill(5, live(7));
        pool.fill(2, live(3));
        let mut rng = PostmarkRng::new(42);
        for _ in 0..50 {
            assert!([2, 5].contains(&pool.pick_live(&mut rng)));
        }
    }

    /// The first free slot beyond the first summary word (4096 slots),
    /// and again after the slots before it fill up.
    #[test]
    fn finds_the_first_free_slot_in_a_large_table() {
        let mut pool = Pool::new(5000);
        for index in 0..10_000 {
            pool.fill(index, live(1));
        }
        pool.release(9_999);
        pool.release(4_100);
        pool.cursor = 0;
        assert_eq!(pool.free_slot(), Some(4_100));
        pool.fill(4_100, live(1));
        pool.cursor = 0;
        assert_eq!(pool.free_slot(), Some(9_999));
    }
}
