//! fio's random map: which blocks of a file a pass has done. A random
//! offset that falls on a done block moves on to the next free one
//! (cyclically), an I/O marks the run of free blocks it starts on (and is
//! cut where a done block begins), and a full map ends the pass. The
//! blocks are bits in words, with a level above that marks full words
//! and so on up, so the next free block is found in a few steps however
//! full the map is (fio's axmap works the same way).

const BITS: u64 = 64;

#[derive(Debug, Clone)]
pub struct BlockMap {
    /// `levels[0]`: a bit per block, set when done; `levels[k + 1]`: a
    /// bit per word of `levels[k]`, set when that word is full.
    levels: Vec<Vec<u64>>,
    blocks: u64,
    free: u64,
}

impl BlockMap {
    pub fn new(blocks: u64) -> BlockMap {
        let mut levels = Vec::new();
        let mut bits = blocks.max(1);
        loop {
            let words = bits.div_ceil(BITS);
            levels.push(vec![0; words as usize]);
            if words == 1 {
                break;
            }
            bits = words;
        }
        BlockMap {
            levels,
            blocks,
            free: blocks,
        }
    }

    pub fn reset(&mut self) {
        for level in &mut self.levels {
            level.fill(0);
        }
        self.free = self.blocks;
    }

    pub fn is_done(&self, block: u64) -> bool {
        self.levels[0][(block / BITS) as usize] & (1 << (block % BITS)) != 0
    }

    /// The first free block after `block`, going round to the start; None
    /// when every block is done.
    pub fn next_free_after(&self, block: u64) -> Option<u64> {
        if self.free == 0 {
            return None;
        }
        let next = (block + 1) % self.blocks;
        self.first_free(0, next)
            .filter(|&b| b < self.blocks)
            .or_else(|| self.first_free(0, 0))
            .filter(|&b| b < self.blocks)
    }

    /// The first clear bit at or after `from` on `level`.
    fn first_free(&self, level: usize, from: u64) -> Option<u64> {
        let words = &self.levels[level];
        let word = from / BITS;
        let current = *words.get(word as usize)?;
        let open = !current & (u64::MAX << (from % BITS));
        if open != 0 {
            return Some(word * BITS + u64::from(open.trailing_zeros()));
        }
        // The next word that is not full, from the level above (the top
        // level is one word: searched directly).
        let next_word = match self.levels.get(level + 1) {
            Some(_) => self.first_free(level + 1, word + 1)?,
            None => return None,
        };
        let open = !*words.get(next_word as usize)?;
        Some(next_word * BITS + u64::from(open.trailing_zeros()))
    }

    /// Marks up to `count` blocks from `first` done, stopping at the first
    /// block already done; returns how many it marked.
    pub fn mark_run(&mut self, first: u64, count: u64) -> u64 {
        let mut marked = 0;
        while marked < count {
            let block = first + marked;
            if block >= self.blocks || self.is_done(block) {
                break;
            }
            self.mark(block);
            marked += 1;
        }
        marked
    }

    fn mark(&mut self, block: u64) {
        self.free -= 1;
        let mut index = block;
        for level in &mut self.levels {
            let word = &mut level[(index / BITS) as usize];
            *word |= 1 << (index % BITS);
            if *word != u64::MAX {
                return;
            }
            index /= BITS;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block once: marking the next free block after random ones
    /// fills the map in exactly `blocks` steps, each block once.
    #[test]
    fn the_next_free_block_visits_each_block_once() {
        for blocks in [1u64, 63, 64, 65, 4096, 4097, 300_000] {
            let mut map = BlockMap::new(blocks);
            let mut seen = vec![false; blocks as usize];
            let mut at = 0u64;
            for step in 0..blocks {
                at = (at * 6364136223846793005 + 1442695040888963407) % blocks;
                let block = match map.is_done(at) {
                    false => at,
                    true => map.next_free_after(at).expect("a free block is left"),
                };
                assert!(
                    !seen[block as usize],
                    "{blocks}: block {block} twice at {step}"
                );
                seen[block as usize] = true;
                assert_eq!(map.mark_run(block, 1), 1);
            }
            assert_eq!(map.next_free_after(0), None, "{blocks}: full");
            map.reset();
            assert!(!map.is_done(blocks - 1) && map.next_free_after(0).is_some());
        }
    }

    #[test]
    fn the_next_free_block_is_after_then_round_to_the_start() {
        let mut map = BlockMap::new(200);
        map.mark_run(0, 10);
        map.mark_run(150, 50);
        assert_eq!(map.next_free_after(3), Some(10));
        assert_eq!(map.next_free_after(160), Some(10), "round to the start");
        assert_eq!(map.next_free_after(10), Some(11));
        map.mark_run(64, 64);
        assert_eq!(map.next_free_after(63), Some(128), "a full word skipped");
    }

    /// An I/O marks the run of free blocks it starts on and stops at a
    /// done one (fio cuts the I/O there).
    #[test]
    fn a_run_stops_at_a_done_block() {
        let mut map = BlockMap::new(100);
        assert_eq!(map.mark_run(20, 1), 1);
        assert_eq!(map.mark_run(4, 16), 16);
        assert_eq!(map.mark_run(0, 16), 4, "blocks 4.. are done");
        assert_eq!(map.mark_run(21, 200), 79, "the map's end");
        assert_eq!(map.next_free_after(0), None, "full");
    }
}
