//! Btree pages: the special space, the metapage, a checked read view and the few page
//! changes the btree needs beyond `storage::page` (PostgreSQL's `nbtpage.c`, `nbtree.h`).
//!
//! ```text
//!  every btree page: storage::page's layout (page rule 1) with 16 bytes of special space
//!  +--------------------------------------------------------------------------------+
//!  | page header (24) | line pointers ->            free            <- items         |
//!  +--------------------------------------------------------------------------------+
//!  | special space, BTPageOpaqueData:                                               |
//!  |   btpo_prev u32 | btpo_next u32 | btpo_level u32 | btpo_flags u16 | cycleid u16 |
//!  +--------------------------------------------------------------------------------+
//!   btpo_prev / btpo_next: left and right sibling on the same level, P_NONE (0) at the
//!   ends (block 0 is the metapage, so 0 is never a sibling). btpo_level: 0 for leaves.
//!   btpo_cycleid is always 0 (PostgreSQL's vacuum cycle id; our VACUUM needs none).
//!
//!  items of a non-rightmost page:  1 = high key (P_HIKEY), 2.. = data items
//!  items of a rightmost page:      1.. = data items (no high key: its upper bound is +inf)
//!  first data item of an internal page: the minus-infinity downlink (no key)
//!
//!  metapage (block 0): btpo_flags = BTP_META, item 1 = BTMetaPageData:
//!   0 btm_magic u32 (0x053162) | 4 btm_version u32 (4) | 8 btm_root u32 | 12 btm_level u32
//!   16 btm_natts u32 (Myriad: the index's key columns)
//! ```
//!
//! The metadata is an item (not raw bytes after the header as in PostgreSQL) so that
//! `storage::page::verify` checks it like any page. Line pointers of btree pages are
//! always NORMAL and in key order; an item is inserted by appending it and rotating the
//! line pointer array (PostgreSQL's `PageAddItem` at an offset), and items are removed by
//! rebuilding the page (`PageIndexMultiDelete`), so no page ever has UNUSED or DEAD line
//! pointers or fragmented space. `BtPage::open` checks what `storage` cannot: the
//! special space, flags, level and (as they are read) line pointers and tuples; a bad
//! page is DATA_CORRUPTED naming the relation and block, never a panic.

use std::cmp::Ordering;

use common::ids::{BlockNumber, OffsetNumber};
use common::limits::BLCKSZ;
use common::{PgError, PgResult, RelId, SqlState};
use storage::page::{
    MAXIMUM_ALIGNOF, PD_HAS_FREE_LINES, Page, PageMut, SIZE_OF_ITEM_ID, SIZE_OF_PAGE_HEADER,
    maxalign,
};
use storage::smgr::relpath;

use super::tuple::{self, ScanKey, TupleRef};

/// "No page": the sibling link of a page at the end of its level.
pub const P_NONE: BlockNumber = 0;
/// Block number of the metapage.
pub const BTREE_METAPAGE: BlockNumber = 0;
/// `btm_magic`: PostgreSQL's `BTREE_MAGIC`.
pub const BTREE_MAGIC: u32 = 0x053162;
/// `btm_version`: PostgreSQL 12+'s heapkeyspace btree version.
pub const BTREE_VERSION: u32 = 4;
/// Offset of the high key on a non-rightmost page.
pub const P_HIKEY: OffsetNumber = 1;
/// Size of the special space (`sizeof(BTPageOpaqueData)`).
pub const BT_SPECIAL_SIZE: usize = 16;
/// Bytes of a btree page available for items and their line pointers.
pub const BT_PAGE_CAPACITY: usize = BLCKSZ - SIZE_OF_PAGE_HEADER - BT_SPECIAL_SIZE;

/// `btpo_flags`: a leaf page.
pub const BTP_LEAF: u16 = 1 << 0;
/// `btpo_flags`: the root page (cleared by the root's split).
pub const BTP_ROOT: u16 = 1 << 1;
/// `btpo_flags`: the metapage.
pub const BTP_META: u16 = 1 << 3;
/// `btpo_flags`: the right half of this page's split has no downlink yet (nbtree rule 5).
pub const BTP_INCOMPLETE_SPLIT: u16 = 1 << 7;
/// Flags a page may carry; PostgreSQL's others (deleted, half-dead, split end, has
/// garbage) are never set here.
const BTP_KNOWN_FLAGS: u16 = BTP_LEAF | BTP_ROOT | BTP_META | BTP_INCOMPLETE_SPLIT;

const _: () = assert!(BT_SPECIAL_SIZE == 4 + 4 + 4 + 2 + 2);
const _: () = assert!(BT_SPECIAL_SIZE.is_multiple_of(MAXIMUM_ALIGNOF));
const _: () = assert!(BT_PAGE_CAPACITY == 8152);

const META_SIZE: usize = 20;

/// The special space of a btree page (`BTPageOpaqueData`, less the always-zero cycle id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BtOpaque {
    pub prev: BlockNumber,
    pub next: BlockNumber,
    pub level: u32,
    pub flags: u16,
}

fn u32_at(data: &[u8; BLCKSZ], at: usize) -> u32 {
    u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

/// Read the special space (the caller knows the page has a 16-byte one).
fn read_opaque(data: &[u8; BLCKSZ]) -> BtOpaque {
    let at = BLCKSZ - BT_SPECIAL_SIZE;
    BtOpaque {
        prev: u32_at(data, at),
        next: u32_at(data, at + 4),
        level: u32_at(data, at + 8),
        flags: u16::from_le_bytes([data[at + 12], data[at + 13]]),
    }
}

/// Write the special space of a page initialised with [`BT_SPECIAL_SIZE`].
pub(crate) fn write_opaque(data: &mut [u8; BLCKSZ], o: BtOpaque) {
    let at = BLCKSZ - BT_SPECIAL_SIZE;
    data[at..at + 4].copy_from_slice(&o.prev.to_le_bytes());
    data[at + 4..at + 8].copy_from_slice(&o.next.to_le_bytes());
    data[at + 8..at + 12].copy_from_slice(&o.level.to_le_bytes());
    data[at + 12..at + 14].copy_from_slice(&o.flags.to_le_bytes());
    data[at + 14..at + 16].copy_from_slice(&0u16.to_le_bytes());
}

/// Space an item of `len` bytes takes on a page, line pointer included.
pub(crate) fn item_space(len: usize) -> usize {
    maxalign(len) + SIZE_OF_ITEM_ID
}

/// The error for a bad btree page.
pub(crate) fn corrupt(rel: RelId, block: BlockNumber, detail: impl Into<String>) -> PgError {
    PgError::new(
        SqlState::DATA_CORRUPTED,
        format!(
            "invalid btree page in block {block} of relation {}",
            relpath(rel)
        ),
    )
    .with_detail(detail)
    .with_hint("Please REINDEX it.")
}

/// The metapage's contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BtMeta {
    pub root: BlockNumber,
    pub level: u32,
    pub natts: u16,
}

/// Initialise `data` as a metapage.
pub(crate) fn init_meta(data: &mut [u8; BLCKSZ], meta: BtMeta) {
    let mut page = PageMut::new(data);
    page.init(BT_SPECIAL_SIZE);
    let off = page.add_item(&encode_meta(meta));
    assert_eq!(off, Some(1), "an empty page takes the metadata");
    write_opaque(
        data,
        BtOpaque {
            prev: P_NONE,
            next: P_NONE,
            level: 0,
            flags: BTP_META,
        },
    );
}

fn encode_meta(meta: BtMeta) -> [u8; META_SIZE] {
    let mut out = [0u8; META_SIZE];
    out[0..4].copy_from_slice(&BTREE_MAGIC.to_le_bytes());
    out[4..8].copy_from_slice(&BTREE_VERSION.to_le_bytes());
    out[8..12].copy_from_slice(&meta.root.to_le_bytes());
    out[12..16].copy_from_slice(&meta.level.to_le_bytes());
    out[16..20].copy_from_slice(&(meta.natts as u32).to_le_bytes());
    out
}

/// The highest level a root can have: an internal page holds at least two downlinks
/// (an item is at most a third of a page), so 32 levels above the leaves already reach
/// more blocks than a relation may have. A metapage saying more is corrupt (and would
/// make [`BTree::check`](super::BTree::check) size its per-level counts by it).
const BTREE_MAX_LEVEL: u32 = 32;

/// Read and check the metapage.
pub(crate) fn read_meta(data: &[u8; BLCKSZ], rel: RelId) -> PgResult<BtMeta> {
    let bad = |d: String| corrupt(rel, BTREE_METAPAGE, d);
    let page = Page::new(data);
    if page.is_new() {
        return Err(bad("the metapage is a zero page (index not built?)".into()));
    }
    if page.special() as usize != BLCKSZ - BT_SPECIAL_SIZE {
        return Err(bad(format!(
            "special space at {}, not a btree page",
            page.special()
        )));
    }
    let o = read_opaque(data);
    if o.flags != BTP_META {
        return Err(bad(format!("metapage flags {:#06x}", o.flags)));
    }
    let item = page
        .get_item(1)
        .filter(|i| i.len() == META_SIZE)
        .ok_or_else(|| bad("metapage has no metadata item".into()))?;
    let word = |at: usize| u32::from_le_bytes([item[at], item[at + 1], item[at + 2], item[at + 3]]);
    if word(0) != BTREE_MAGIC {
        return Err(bad(format!(
            "metapage magic {:#x}, expected {BTREE_MAGIC:#x}",
            word(0)
        )));
    }
    if word(4) != BTREE_VERSION {
        return Err(bad(format!(
            "btree version {}, expected {BTREE_VERSION}",
            word(4)
        )));
    }
    let natts = word(16);
    if natts == 0 || natts as usize > tuple::INDEX_MAX_KEYS {
        return Err(bad(format!("metapage says {natts} key columns")));
    }
    let meta = BtMeta {
        root: word(8),
        level: word(12),
        natts: natts as u16,
    };
    if meta.root == BTREE_METAPAGE {
        return Err(bad("metapage points at itself as the root".into()));
    }
    if meta.level > BTREE_MAX_LEVEL {
        return Err(bad(format!(
            "metapage says the root is at level {}",
            meta.level
        )));
    }
    Ok(meta)
}

/// Overwrite the metadata of a metapage already checked by [`read_meta`].
pub(crate) fn write_meta(data: &mut [u8; BLCKSZ], meta: BtMeta) {
    let mut page = PageMut::new(data);
    let item = page.item_mut(1).expect("checked by read_meta");
    item.copy_from_slice(&encode_meta(meta));
}

/// A checked, read-only view of a btree page (not the metapage).
#[derive(Clone, Copy)]
pub(crate) struct BtPage<'a> {
    page: Page<'a>,
    opaque: BtOpaque,
    rel: RelId,
    block: BlockNumber,
}

impl<'a> BtPage<'a> {
    /// Check the page's btree structure (special space, flags, level, high key present).
    pub(crate) fn open(
        data: &'a [u8; BLCKSZ],
        rel: RelId,
        block: BlockNumber,
    ) -> PgResult<BtPage<'a>> {
        let bad = |d: String| corrupt(rel, block, d);
        let page = Page::new(data);
        if page.is_new() {
            return Err(bad("unexpected zero page".into()));
        }
        if page.special() as usize != BLCKSZ - BT_SPECIAL_SIZE {
            return Err(bad(format!(
                "special space at {}, not a btree page",
                page.special()
            )));
        }
        if page.flags() & PD_HAS_FREE_LINES != 0 {
            return Err(bad("btree page has unused line pointers".into()));
        }
        let opaque = read_opaque(data);
        if opaque.flags & !BTP_KNOWN_FLAGS != 0 {
            return Err(bad(format!("unknown btpo_flags {:#06x}", opaque.flags)));
        }
        if opaque.flags & BTP_META != 0 || block == BTREE_METAPAGE {
            return Err(bad("the metapage where a btree page was expected".into()));
        }
        if (opaque.flags & BTP_LEAF != 0) != (opaque.level == 0) {
            return Err(bad(format!(
                "level {} disagrees with flags {:#06x}",
                opaque.level, opaque.flags
            )));
        }
        if opaque.next == block || opaque.prev == block {
            return Err(bad(format!(
                "page is its own sibling (prev {}, next {})",
                opaque.prev, opaque.next
            )));
        }
        let p = BtPage {
            page,
            opaque,
            rel,
            block,
        };
        let data_items = p.max_offset() as i32 - p.first_data() as i32 + 1;
        if data_items < if p.is_leaf() { 0 } else { 1 } {
            return Err(bad(format!(
                "{} items on a {} page",
                p.max_offset(),
                if p.is_leaf() { "leaf" } else { "internal" }
            )));
        }
        Ok(p)
    }

    pub(crate) fn block(&self) -> BlockNumber {
        self.block
    }

    pub(crate) fn opaque(&self) -> BtOpaque {
        self.opaque
    }

    pub(crate) fn level(&self) -> u32 {
        self.opaque.level
    }

    pub(crate) fn is_leaf(&self) -> bool {
        self.opaque.flags & BTP_LEAF != 0
    }

    pub(crate) fn is_root(&self) -> bool {
        self.opaque.flags & BTP_ROOT != 0
    }

    pub(crate) fn is_rightmost(&self) -> bool {
        self.opaque.next == P_NONE
    }

    pub(crate) fn incomplete_split(&self) -> bool {
        self.opaque.flags & BTP_INCOMPLETE_SPLIT != 0
    }

    pub(crate) fn next(&self) -> BlockNumber {
        self.opaque.next
    }

    pub(crate) fn prev(&self) -> BlockNumber {
        self.opaque.prev
    }

    pub(crate) fn max_offset(&self) -> OffsetNumber {
        self.page.max_offset()
    }

    /// First data item (`P_FIRSTDATAKEY`): after the high key, if there is one.
    pub(crate) fn first_data(&self) -> OffsetNumber {
        if self.is_rightmost() { 1 } else { 2 }
    }

    /// Bytes free for one more item (its line pointer already allowed for).
    pub(crate) fn free_space(&self) -> usize {
        self.page.free_space()
    }

    pub(crate) fn corrupt(&self, detail: impl Into<String>) -> PgError {
        corrupt(self.rel, self.block, detail)
    }

    /// The tuple at `off`, header checked.
    pub(crate) fn tuple(&self, off: OffsetNumber) -> PgResult<TupleRef<'a>> {
        let bytes = self
            .page
            .get_item(off)
            .ok_or_else(|| self.corrupt(format!("line pointer {off} is not a NORMAL item")))?;
        TupleRef::parse(bytes).map_err(|d| self.corrupt(format!("item {off}: {d}")))
    }

    /// The high key, if the page is not rightmost.
    pub(crate) fn high_key(&self) -> PgResult<Option<TupleRef<'a>>> {
        if self.is_rightmost() {
            return Ok(None);
        }
        let hk = self.tuple(P_HIKEY)?;
        if !hk.is_pivot() {
            return Err(self.corrupt("the high key is not a pivot tuple"));
        }
        Ok(Some(hk))
    }

    /// Compare a search key with the tuple at `off`.
    pub(crate) fn compare(&self, sk: &ScanKey<'_>, off: OffsetNumber) -> PgResult<Ordering> {
        let t = self.tuple(off)?;
        tuple::compare(sk, &t).map_err(|d| self.corrupt(format!("item {off}: {d}")))
    }

    /// Lehman–Yao (nbtree rule 3): is `sk` at or beyond this page's high key, so that its
    /// place is on a page to the right?
    pub(crate) fn should_move_right(&self, sk: &ScanKey<'_>) -> PgResult<bool> {
        if self.is_rightmost() {
            return Ok(false);
        }
        Ok(self.compare(sk, P_HIKEY)? != Ordering::Less)
    }

    /// First data item greater than or equal to `sk` (`_bt_binsrch` on a leaf), or
    /// `max_offset() + 1`.
    pub(crate) fn binsrch(&self, sk: &ScanKey<'_>) -> PgResult<OffsetNumber> {
        let (mut lo, mut hi) = (self.first_data(), self.max_offset() + 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.compare(sk, mid)? == Ordering::Greater {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// On an internal page, the downlink to follow for `sk`: the last item less than or
    /// equal to it (the first data item is minus infinity, so there always is one).
    pub(crate) fn find_child(&self, sk: &ScanKey<'_>) -> PgResult<(OffsetNumber, BlockNumber)> {
        let first = self.first_data();
        let (mut lo, mut hi) = (first + 1, self.max_offset() + 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.compare(sk, mid)? == Ordering::Less {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let off = lo - 1;
        Ok((off, self.downlink(off)?))
    }

    /// The child block of the downlink at `off` (checked to be a plausible block).
    pub(crate) fn downlink(&self, off: OffsetNumber) -> PgResult<BlockNumber> {
        let t = self.tuple(off)?;
        if !t.is_pivot() || t.downlink() == P_NONE || t.downlink() == self.block {
            return Err(self.corrupt(format!("item {off} is not a downlink")));
        }
        Ok(t.downlink())
    }

    /// The offset of the downlink to `child`, if this page has it; `hint` (where the
    /// descent found it) is looked at first: downlinks only move right, by inserts to
    /// their left, so it is usually exact or close.
    pub(crate) fn find_downlink(
        &self,
        child: BlockNumber,
        hint: OffsetNumber,
    ) -> PgResult<Option<OffsetNumber>> {
        let (first, max) = (self.first_data(), self.max_offset());
        if hint >= first && hint <= max && self.downlink(hint)? == child {
            return Ok(Some(hint));
        }
        for off in hint.clamp(first, max + 1)..=max {
            if self.downlink(off)? == child {
                return Ok(Some(off));
            }
        }
        for off in first..hint.min(max + 1) {
            if self.downlink(off)? == child {
                return Ok(Some(off));
            }
        }
        Ok(None)
    }
}

/// Build a btree page from scratch in `out`: the special space, then the high key (if
/// any) and `items` in order. `lsn` is carried over from the page being replaced. False if
/// they do not fit (the caller checked sizes, so that is a bug it reports).
pub(crate) fn build_page(
    out: &mut [u8; BLCKSZ],
    opaque: BtOpaque,
    high_key: Option<&[u8]>,
    items: &[&[u8]],
    lsn: u64,
) -> bool {
    let mut page = PageMut::new(out);
    page.init(BT_SPECIAL_SIZE);
    page.set_lsn(lsn);
    for item in high_key.into_iter().chain(items.iter().copied()) {
        if page.add_item(item).is_none() {
            return false;
        }
    }
    write_opaque(out, opaque);
    true
}

/// Insert `item` so that it becomes item `off`, moving later items up by one (PostgreSQL's
/// `PageAddItem` at a given offset). False, changing nothing, if it does not fit.
pub(crate) fn insert_item_at(data: &mut [u8; BLCKSZ], off: OffsetNumber, item: &[u8]) -> bool {
    let max = Page::new(data).max_offset();
    assert!(off >= 1 && off <= max + 1, "insert at {off} of {max} items");
    let Some(added) = PageMut::new(data).add_item(item) else {
        return false;
    };
    // A btree page has no UNUSED line pointers to reuse (checked in BtPage::open), so the
    // new one is appended; rotate it into place.
    assert_eq!(added, max + 1, "add_item appended the line pointer");
    let start = SIZE_OF_PAGE_HEADER + (off as usize - 1) * SIZE_OF_ITEM_ID;
    let end = SIZE_OF_PAGE_HEADER + added as usize * SIZE_OF_ITEM_ID;
    data[start..end].rotate_right(SIZE_OF_ITEM_ID);
    true
}

/// Set or clear flags in a btree page's special space.
pub(crate) fn set_flags(data: &mut [u8; BLCKSZ], set: u16, clear: u16) {
    let mut o = read_opaque(data);
    o.flags = (o.flags | set) & !clear;
    write_opaque(data, o);
}

/// Set a page's left-link.
pub(crate) fn set_prev(data: &mut [u8; BLCKSZ], prev: BlockNumber) {
    let mut o = read_opaque(data);
    o.prev = prev;
    write_opaque(data, o);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nbtree::KeyOrder;
    use crate::nbtree::tuple::{encode_leaf, minus_infinity};
    use common::Value;
    use common::ids::ItemPointer;

    fn leaf(items: &[i32]) -> Box<[u8; BLCKSZ]> {
        let tuples: Vec<Vec<u8>> = items
            .iter()
            .map(|i| {
                encode_leaf(
                    &[Value::Int4(*i)],
                    ItemPointer {
                        block: 1,
                        offset: *i as u16,
                    },
                )
            })
            .collect();
        let refs: Vec<&[u8]> = tuples.iter().map(Vec::as_slice).collect();
        let mut data = Box::new([0u8; BLCKSZ]);
        let o = BtOpaque {
            prev: P_NONE,
            next: P_NONE,
            level: 0,
            flags: BTP_LEAF | BTP_ROOT,
        };
        assert!(build_page(&mut data, o, None, &refs, 0));
        data
    }

    fn keys(data: &[u8; BLCKSZ]) -> Vec<i32> {
        let p = BtPage::open(data, 7, 3).expect("open");
        (p.first_data()..=p.max_offset())
            .map(|off| match p.tuple(off).unwrap().values().unwrap()[..] {
                [Value::Int4(i)] => i,
                ref v => panic!("{v:?}"),
            })
            .collect()
    }

    #[test]
    fn special_space_and_layout() {
        let data = leaf(&[10, 20, 30]);
        let p = BtPage::open(&data, 7, 3).expect("open");
        assert_eq!(
            p.opaque(),
            BtOpaque {
                prev: 0,
                next: 0,
                level: 0,
                flags: BTP_LEAF | BTP_ROOT
            }
        );
        assert!(p.is_leaf() && p.is_root() && p.is_rightmost());
        assert_eq!(p.first_data(), 1);
        assert_eq!(Page::new(&data).special() as usize, BLCKSZ - 16);
        // The special space bytes are PostgreSQL's BTPageOpaqueData.
        assert_eq!(
            &data[BLCKSZ - 4..BLCKSZ - 2],
            &(BTP_LEAF | BTP_ROOT).to_le_bytes()
        );
        assert_eq!(keys(&data), vec![10, 20, 30]);
        let five = [Value::Int4(20)];
        let sk = ScanKey::Prefix {
            values: &five,
            after: false,
            order: KeyOrder::default(),
        };
        assert_eq!(p.binsrch(&sk).unwrap(), 2);
        let sk = ScanKey::Prefix {
            values: &five,
            after: true,
            order: KeyOrder::default(),
        };
        assert_eq!(p.binsrch(&sk).unwrap(), 3);
        assert_eq!(p.binsrch(&ScanKey::PlusInfinity).unwrap(), 4);
        assert!(!p.should_move_right(&ScanKey::PlusInfinity).unwrap());
    }

    #[test]
    fn insert_at_keeps_line_pointers_in_order() {
        let mut data = leaf(&[10, 30]);
        let t = encode_leaf(
            &[Value::Int4(20)],
            ItemPointer {
                block: 1,
                offset: 20,
            },
        );
        assert!(insert_item_at(&mut data, 2, &t));
        let t = encode_leaf(
            &[Value::Int4(5)],
            ItemPointer {
                block: 1,
                offset: 5,
            },
        );
        assert!(insert_item_at(&mut data, 1, &t));
        let t = encode_leaf(
            &[Value::Int4(40)],
            ItemPointer {
                block: 1,
                offset: 40,
            },
        );
        assert!(insert_item_at(&mut data, 5, &t));
        assert_eq!(keys(&data), vec![5, 10, 20, 30, 40]);
        let mut copy = *data;
        storage::page::set_checksum(&mut copy, 3);
        storage::page::verify(&copy, 7, 3).expect("storage still sees a valid page");
        // Fill it up: the insert that does not fit changes nothing.
        let mut n = 41;
        while insert_item_at(
            &mut data,
            1,
            &encode_leaf(
                &[Value::Int4(-n)],
                ItemPointer {
                    block: 1,
                    offset: 1,
                },
            ),
        ) {
            n += 1;
        }
        let before = *data;
        assert!(!insert_item_at(
            &mut data,
            1,
            &encode_leaf(
                &[Value::Int4(0)],
                ItemPointer {
                    block: 1,
                    offset: 1
                }
            )
        ));
        assert_eq!(before[..], data[..]);
        // 16-byte tuples + 4-byte line pointers: 8152 / 20 = 407.
        assert_eq!(BtPage::open(&data, 7, 3).unwrap().max_offset(), 407);
    }

    #[test]
    fn internal_page_descent() {
        let mut data = Box::new([0u8; BLCKSZ]);
        let inf = minus_infinity(10);
        let mut p20 = encode_leaf(
            &[Value::Int4(20)],
            ItemPointer {
                block: 0,
                offset: 0,
            },
        );
        let mut p40 = encode_leaf(
            &[Value::Int4(40)],
            ItemPointer {
                block: 0,
                offset: 0,
            },
        );
        // Make them pivots pointing at 11 and 12.
        for (t, child) in [(&mut p20, 11u32), (&mut p40, 12u32)] {
            let r = crate::nbtree::tuple::TupleRef::parse(t).unwrap();
            let l = encode_leaf(
                &[Value::Int4(0)],
                ItemPointer {
                    block: 0,
                    offset: 1,
                },
            );
            let piv = crate::nbtree::tuple::leaf_pivot(
                &crate::nbtree::tuple::TupleRef::parse(&l).unwrap(),
                &r,
            )
            .unwrap();
            *t = crate::nbtree::tuple::with_downlink(
                &crate::nbtree::tuple::TupleRef::parse(&piv).unwrap(),
                child,
            );
        }
        let o = BtOpaque {
            prev: P_NONE,
            next: P_NONE,
            level: 1,
            flags: BTP_ROOT,
        };
        assert!(build_page(&mut data, o, None, &[&inf, &p20, &p40], 0));
        let p = BtPage::open(&data, 7, 5).unwrap();
        let child = |k: i32| {
            let v = [Value::Int4(k)];
            p.find_child(&ScanKey::Prefix {
                values: &v,
                after: false,
                order: KeyOrder::default(),
            })
            .unwrap()
            .1
        };
        assert_eq!(child(5), 10);
        assert_eq!(
            child(20),
            11,
            "a prefix equal to a truncated pivot goes right"
        );
        assert_eq!(child(39), 11);
        assert_eq!(child(40), 12);
        assert_eq!(child(1000), 12);
        assert_eq!(p.find_child(&ScanKey::MinusInfinity).unwrap().1, 10);
        assert_eq!(p.find_downlink(12, 0).unwrap(), Some(3));
        assert_eq!(p.find_downlink(12, 3).unwrap(), Some(3));
        assert_eq!(p.find_downlink(10, 2).unwrap(), Some(1));
        assert_eq!(p.find_downlink(99, 9).unwrap(), None);
    }

    #[test]
    fn corrupt_pages_are_errors() {
        let good = leaf(&[1, 2, 3]);
        let zero = Box::new([0u8; BLCKSZ]);
        let e = BtPage::open(&zero, 7, 3).err().expect("zero page");
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
        assert_eq!(
            e.message,
            "invalid btree page in block 3 of relation base/7"
        );
        // Bad flags, level/leaf mismatch, self-links.
        for (set, clear, level) in [(0x40u16, 0u16, 0u32), (0, BTP_LEAF, 0), (0, 0, 2)] {
            let mut bad = good.clone();
            set_flags(&mut bad, set, clear);
            let mut o = read_opaque(&bad);
            o.level = level.max(o.level);
            write_opaque(&mut bad, o);
            assert!(BtPage::open(&bad, 7, 3).is_err());
        }
        let mut bad = good.clone();
        set_prev(&mut bad, 3);
        assert!(BtPage::open(&bad, 7, 3).is_err());
        assert!(BtPage::open(&good, 7, BTREE_METAPAGE).is_err());
        // Garbage in an item: decoding fails with an error, never a panic.
        let mut bad = good.clone();
        let lp = Page::new(&bad).item_id(2).unwrap();
        bad[lp.off as usize + 8] = 0xee;
        let p = BtPage::open(&bad, 7, 3).unwrap();
        let e = p
            .tuple(2)
            .and_then(|t| t.values().map_err(|d| p.corrupt(d)))
            .expect_err("bad tag");
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
    }

    #[test]
    fn metapage_round_trip() {
        let mut data = Box::new([0u8; BLCKSZ]);
        let meta = BtMeta {
            root: 3,
            level: 2,
            natts: 4,
        };
        init_meta(&mut data, meta);
        assert_eq!(read_meta(&data, 7).unwrap(), meta);
        write_meta(&mut data, BtMeta { root: 9, ..meta });
        assert_eq!(read_meta(&data, 7).unwrap().root, 9);
        let mut copy = *data;
        storage::page::set_checksum(&mut copy, 0);
        storage::page::verify(&copy, 7, 0).expect("storage sees a valid page");
        let e = read_meta(&leaf(&[1]), 7).expect_err("not a metapage");
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
        assert!(
            BtPage::open(&data, 7, 0).is_err(),
            "the metapage is not a tree page"
        );
    }
}
