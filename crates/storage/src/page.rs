//! The 8 KiB slotted page, laid out as PostgreSQL's (`bufpage.h`), with checksums.
//!
//! ```text
//!  0        8          10        12        14        16          18                  20            24
//!  +--------+----------+---------+---------+---------+-----------+-------------------+-------------+
//!  | pd_lsn | checksum | flags   | lower   | upper   | special   | pagesize_version  | prune_xid   |
//!  |  u64   |   u16    |  u16    |  u16    |  u16    |   u16     |  u16 (8192 | 4)   |    u32      |
//!  +--------+----------+---------+---------+---------+-----------+-------------------+-------------+
//!  | line pointer 1 | line pointer 2 | ... | line pointer N |  -> grows up; pd_lower is its end
//!  +----------------+----------------+-----+----------------+
//!  |                       free space                       |
//!  +------------------------+-------------------------------+
//!  |     ... | item N | ... | item 2 | item 1 |  <- grows down; pd_upper is its start
//!  +------------------------+-----------------+-------------+
//!  |            special space (index pages; empty for heap)  |  pd_special .. BLCKSZ
//!  +---------------------------------------------------------+
//!
//!  line pointer (ItemIdData), one little-endian u32:
//!   bits  0..15  lp_off   byte offset of the item in the page
//!   bits 15..17  lp_flags UNUSED = 0, NORMAL = 1, REDIRECT = 2, DEAD = 3
//!   bits 17..32  lp_len   item length in bytes
//! ```
//!
//! All integers are little-endian. Items start at 8-byte (MAXALIGN) boundaries, as in
//! PostgreSQL; `lp_len` is the exact length. Line pointers are numbered from 1
//! ([`OffsetNumber`]); a line pointer keeps its number for its item's life, which is what
//! makes an [`ItemPointer`](common::ids::ItemPointer) stable.
//!
//! Interface: [`Page`] reads a page (`&[u8; BLCKSZ]`), [`PageMut`] changes one;
//! [`verify`] checks a page read from disk, [`set_checksum`] stamps one being written.
//! Callers hold the buffer's content lock (shared for `Page`, exclusive for `PageMut`).
//!
//! Invariants of an initialised page (checked by [`verify`] on every read from disk):
//! `24 <= pd_lower <= pd_upper <= pd_special <= BLCKSZ`, `pd_special` MAXALIGNed, and
//! every NORMAL or DEAD item lies inside `[pd_upper, pd_special)`. A page whose `pd_upper`
//! is 0 is "new" (never initialised, e.g. just extended) and must be all zeros.
//!
//! Checksums: crc32c over the page with `pd_checksum` taken as zero, followed by the block
//! number (so a page written to the wrong place is caught, as PostgreSQL's checksum does),
//! folded to 16 bits. Stamped on the copy being written out, verified when read in. An
//! all-zero page carries no checksum and is valid.

use common::ids::{BlockNumber, OffsetNumber};
use common::limits::BLCKSZ;
use common::{PgError, PgResult, RelId, SqlState};

use crate::smgr::relpath;

/// Size of the page header (`SizeOfPageHeaderData`).
pub const SIZE_OF_PAGE_HEADER: usize = 24;
/// Size of one line pointer (`sizeof(ItemIdData)`).
pub const SIZE_OF_ITEM_ID: usize = 4;
/// Items start at multiples of this (`MAXIMUM_ALIGNOF`).
pub const MAXIMUM_ALIGNOF: usize = 8;
/// Page layout version, as PostgreSQL's `PG_PAGE_LAYOUT_VERSION`.
pub const PG_PAGE_LAYOUT_VERSION: u16 = 4;
/// Largest item that fits on an empty page without special space, PostgreSQL's
/// `MaxHeapTupleSize`: the page less its header and one line pointer.
pub const MAX_ITEM_SIZE: usize = BLCKSZ - maxalign(SIZE_OF_PAGE_HEADER + SIZE_OF_ITEM_ID);

/// `pd_flags`: some line pointers are UNUSED (a hint: `add_item` looks for one to reuse).
pub const PD_HAS_FREE_LINES: u16 = 0x0001;
/// `pd_flags`: no room for another tuple (a hint for pruning, unused yet).
pub const PD_PAGE_FULL: u16 = 0x0002;
/// `pd_flags`: every tuple is visible to everyone; set with the page's visibility map
/// bit and cleared with it (`access::visibilitymap`).
pub const PD_ALL_VISIBLE: u16 = 0x0004;
const PD_VALID_FLAG_BITS: u16 = PD_HAS_FREE_LINES | PD_PAGE_FULL | PD_ALL_VISIBLE;

const PAGESIZE_VERSION: u16 = BLCKSZ as u16 | PG_PAGE_LAYOUT_VERSION;

const _: () = assert!(BLCKSZ == 8192, "page layout assumes 8 KiB pages");
const _: () = assert!(BLCKSZ <= 1 << 15, "lp_off and lp_len are 15 bits");
const _: () = assert!(
    SIZE_OF_PAGE_HEADER == 8 + 2 * 6 + 4,
    "header fields add up to 24"
);
const _: () = assert!(
    MAX_ITEM_SIZE == 8160,
    "PostgreSQL's MaxHeapTupleSize for 8 KiB"
);
const _: () = assert!(BLCKSZ.is_multiple_of(MAXIMUM_ALIGNOF));

// Byte offsets of the header fields.
const PD_LSN: usize = 0;
const PD_CHECKSUM: usize = 8;
const PD_FLAGS: usize = 10;
const PD_LOWER: usize = 12;
const PD_UPPER: usize = 14;
const PD_SPECIAL: usize = 16;
const PD_PAGESIZE_VERSION: usize = 18;
const PD_PRUNE_XID: usize = 20;
const _: () = assert!(PD_PRUNE_XID + 4 == SIZE_OF_PAGE_HEADER);

/// Round `len` up to a multiple of [`MAXIMUM_ALIGNOF`] (`MAXALIGN`).
pub const fn maxalign(len: usize) -> usize {
    (len + MAXIMUM_ALIGNOF - 1) & !(MAXIMUM_ALIGNOF - 1)
}

/// State of a line pointer (`lp_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LpFlags {
    /// Free for reuse; offset and length are 0.
    Unused = 0,
    /// Points at a live item.
    Normal = 1,
    /// Points at another line pointer: the newest live version of a HOT chain whose
    /// root was pruned (access rule 11).
    Redirect = 2,
    /// The item is dead; its storage is reclaimed by [`PageMut::compact`].
    Dead = 3,
}

/// One decoded line pointer (`ItemIdData`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemId {
    pub off: u16,
    pub flags: LpFlags,
    pub len: u16,
}

impl ItemId {
    fn decode(raw: u32) -> ItemId {
        let flags = match (raw >> 15) & 0b11 {
            0 => LpFlags::Unused,
            1 => LpFlags::Normal,
            2 => LpFlags::Redirect,
            _ => LpFlags::Dead,
        };
        ItemId {
            off: (raw & 0x7fff) as u16,
            flags,
            len: (raw >> 17) as u16,
        }
    }

    fn encode(self) -> u32 {
        debug_assert!(
            self.off < 1 << 15 && self.len < 1 << 15,
            "line pointer fields are 15 bits"
        );
        self.off as u32 | (self.flags as u32) << 15 | (self.len as u32) << 17
    }

    const UNUSED: ItemId = ItemId {
        off: 0,
        flags: LpFlags::Unused,
        len: 0,
    };

    /// A DEAD line pointer without storage (page rule 4).
    const DEAD_STUB: ItemId = ItemId {
        off: 0,
        flags: LpFlags::Dead,
        len: 0,
    };
}

fn read_u16(data: &[u8; BLCKSZ], at: usize) -> u16 {
    u16::from_le_bytes([data[at], data[at + 1]])
}

fn write_u16(data: &mut [u8; BLCKSZ], at: usize, v: u16) {
    data[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

/// A read-only view of a page. The header is trusted to be valid (a page in the buffer pool
/// was checked by [`verify`] or made by [`PageMut::init`]); even so no method panics on a
/// bad header: an out-of-range line pointer reads as absent.
#[derive(Clone, Copy)]
pub struct Page<'a> {
    data: &'a [u8; BLCKSZ],
}

impl<'a> Page<'a> {
    pub fn new(data: &'a [u8; BLCKSZ]) -> Page<'a> {
        Page { data }
    }

    /// Never initialised (`PageIsNew`): `pd_upper` is 0. [`verify`] ensures such a page
    /// read from disk is all zeros.
    pub fn is_new(&self) -> bool {
        self.upper() == 0
    }

    pub fn lsn(&self) -> u64 {
        u64::from_le_bytes(self.data[PD_LSN..PD_LSN + 8].try_into().unwrap_or([0; 8]))
    }

    pub fn checksum(&self) -> u16 {
        read_u16(self.data, PD_CHECKSUM)
    }

    pub fn flags(&self) -> u16 {
        read_u16(self.data, PD_FLAGS)
    }

    /// Whether [`PD_ALL_VISIBLE`] is set.
    pub fn is_all_visible(&self) -> bool {
        self.flags() & PD_ALL_VISIBLE != 0
    }

    pub fn lower(&self) -> u16 {
        read_u16(self.data, PD_LOWER)
    }

    pub fn upper(&self) -> u16 {
        read_u16(self.data, PD_UPPER)
    }

    pub fn special(&self) -> u16 {
        read_u16(self.data, PD_SPECIAL)
    }

    pub fn pagesize_version(&self) -> u16 {
        read_u16(self.data, PD_PAGESIZE_VERSION)
    }

    pub fn prune_xid(&self) -> u32 {
        u32::from_le_bytes(
            self.data[PD_PRUNE_XID..PD_PRUNE_XID + 4]
                .try_into()
                .unwrap_or([0; 4]),
        )
    }

    /// Number of line pointers (`PageGetMaxOffsetNumber`); 0 for a new page.
    pub fn max_offset(&self) -> OffsetNumber {
        let lower = self.lower() as usize;
        (lower.saturating_sub(SIZE_OF_PAGE_HEADER) / SIZE_OF_ITEM_ID) as OffsetNumber
    }

    /// The line pointer `off` (1-based), or `None` past the end.
    pub fn item_id(&self, off: OffsetNumber) -> Option<ItemId> {
        if off == 0 || off > self.max_offset() {
            return None;
        }
        let at = SIZE_OF_PAGE_HEADER + (off as usize - 1) * SIZE_OF_ITEM_ID;
        let raw = self.data.get(at..at + SIZE_OF_ITEM_ID)?;
        Some(ItemId::decode(u32::from_le_bytes(raw.try_into().ok()?)))
    }

    /// The item at `off` if its line pointer is NORMAL.
    pub fn get_item(&self, off: OffsetNumber) -> Option<&'a [u8]> {
        let id = self.item_id(off)?;
        if id.flags != LpFlags::Normal {
            return None;
        }
        self.data
            .get(id.off as usize..id.off as usize + id.len as usize)
    }

    /// Bytes available for one more item, after allowing for a new line pointer
    /// (`PageGetFreeSpace`); 0 for a new page.
    pub fn free_space(&self) -> usize {
        let gap = (self.upper() as usize).saturating_sub(self.lower() as usize);
        gap.saturating_sub(SIZE_OF_ITEM_ID)
    }

    /// Bytes that [`PageMut::compact`] would give back: item storage not used by a NORMAL
    /// item (dead items, space left behind by items that moved on update).
    pub fn fragmented_space(&self) -> usize {
        let used: usize = (1..=self.max_offset())
            .filter_map(|off| self.item_id(off))
            .filter(|id| id.flags == LpFlags::Normal)
            .map(|id| maxalign(id.len as usize))
            .sum();
        (self.special() as usize)
            .saturating_sub(self.upper() as usize)
            .saturating_sub(used)
    }

    /// Does the page have storage to reclaim (of DEAD items, or left by moved items)?
    pub fn needs_compaction(&self) -> bool {
        self.fragmented_space() > 0
    }
}

/// A mutable view of a page. The caller holds the buffer's write guard (buffer rule 1).
pub struct PageMut<'a> {
    data: &'a mut [u8; BLCKSZ],
}

impl<'a> PageMut<'a> {
    pub fn new(data: &'a mut [u8; BLCKSZ]) -> PageMut<'a> {
        PageMut { data }
    }

    /// Read access without giving up the mutable borrow.
    pub fn as_page(&self) -> Page<'_> {
        Page { data: self.data }
    }

    /// Make this an empty page with `special_size` bytes of special space (`PageInit`).
    pub fn init(&mut self, special_size: usize) {
        assert!(
            special_size == maxalign(special_size) && special_size <= BLCKSZ - SIZE_OF_PAGE_HEADER,
            "special space of {special_size} bytes must be MAXALIGNed and fit the page"
        );
        self.data.fill(0);
        let special = (BLCKSZ - special_size) as u16;
        write_u16(self.data, PD_LOWER, SIZE_OF_PAGE_HEADER as u16);
        write_u16(self.data, PD_UPPER, special);
        write_u16(self.data, PD_SPECIAL, special);
        write_u16(self.data, PD_PAGESIZE_VERSION, PAGESIZE_VERSION);
    }

    pub fn set_lsn(&mut self, lsn: u64) {
        self.data[PD_LSN..PD_LSN + 8].copy_from_slice(&lsn.to_le_bytes());
    }

    /// Set or clear [`PD_ALL_VISIBLE`].
    pub fn set_all_visible(&mut self, on: bool) {
        let flags = self.as_page().flags();
        self.set_flags(if on {
            flags | PD_ALL_VISIBLE
        } else {
            flags & !PD_ALL_VISIBLE
        });
    }

    /// Set `pd_prune_xid`: a hint of the oldest deleter on the page whose version may
    /// become prunable (0: none), kept by the heap (access rule 11).
    pub fn set_prune_xid(&mut self, xid: u32) {
        self.data[PD_PRUNE_XID..PD_PRUNE_XID + 4].copy_from_slice(&xid.to_le_bytes());
    }

    fn set_flags(&mut self, flags: u16) {
        write_u16(self.data, PD_FLAGS, flags);
    }

    fn set_lower(&mut self, v: usize) {
        write_u16(self.data, PD_LOWER, v as u16);
    }

    fn set_upper(&mut self, v: usize) {
        write_u16(self.data, PD_UPPER, v as u16);
    }

    fn set_item_id(&mut self, off: OffsetNumber, id: ItemId) {
        let at = SIZE_OF_PAGE_HEADER + (off as usize - 1) * SIZE_OF_ITEM_ID;
        self.data[at..at + SIZE_OF_ITEM_ID].copy_from_slice(&id.encode().to_le_bytes());
    }

    fn assert_initialised(&self) {
        assert!(
            !self.as_page().is_new(),
            "page must be initialised before use"
        );
    }

    /// Add an item (`PageAddItem`): reuses an UNUSED line pointer if there is one, else
    /// appends a line pointer. `None` if it does not fit. Does no compaction: the caller
    /// decides whether [`compact`](Self::compact) is worth trying.
    pub fn add_item(&mut self, item: &[u8]) -> Option<OffsetNumber> {
        self.assert_initialised();
        assert!(
            !item.is_empty() && item.len() <= MAX_ITEM_SIZE,
            "item of {} bytes: must be 1..={MAX_ITEM_SIZE}",
            item.len()
        );
        let page = self.as_page();
        let (lower, upper) = (page.lower() as usize, page.upper() as usize);
        let reuse = if page.flags() & PD_HAS_FREE_LINES != 0 {
            (1..=page.max_offset()).find(|off| {
                page.item_id(*off)
                    .is_some_and(|id| id.flags == LpFlags::Unused)
            })
        } else {
            None
        };
        if reuse.is_none() && page.flags() & PD_HAS_FREE_LINES != 0 {
            // The hint was stale: there are none left.
            self.set_flags(self.as_page().flags() & !PD_HAS_FREE_LINES);
        }
        let size = maxalign(item.len());
        let needed = size + if reuse.is_some() { 0 } else { SIZE_OF_ITEM_ID };
        if upper < lower + needed {
            return None;
        }
        let off = match reuse {
            Some(off) => off,
            None => {
                self.set_lower(lower + SIZE_OF_ITEM_ID);
                ((lower - SIZE_OF_PAGE_HEADER) / SIZE_OF_ITEM_ID + 1) as OffsetNumber
            }
        };
        let start = upper - size;
        self.data[start..start + item.len()].copy_from_slice(item);
        self.data[start + item.len()..upper].fill(0);
        self.set_upper(start);
        self.set_item_id(
            off,
            ItemId {
                off: start as u16,
                flags: LpFlags::Normal,
                len: item.len() as u16,
            },
        );
        Some(off)
    }

    /// The item at `off`, writable, if its line pointer is NORMAL. Its length is fixed.
    pub fn item_mut(&mut self, off: OffsetNumber) -> Option<&mut [u8]> {
        let id = self.as_page().item_id(off)?;
        if id.flags != LpFlags::Normal {
            return None;
        }
        self.data
            .get_mut(id.off as usize..id.off as usize + id.len as usize)
    }

    /// Mark a NORMAL item DEAD (`ItemIdMarkDead`): it is no longer returned, its storage
    /// stays until [`compact`](Self::compact). A REDIRECT becomes a DEAD stub too (HOT
    /// pruning, when its whole chain is dead). Returns false, changing nothing, if `off`
    /// is neither.
    pub fn mark_dead(&mut self, off: OffsetNumber) -> bool {
        match self.as_page().item_id(off) {
            Some(id) if id.flags == LpFlags::Normal => {
                self.set_item_id(
                    off,
                    ItemId {
                        flags: LpFlags::Dead,
                        ..id
                    },
                );
                true
            }
            Some(id) if id.flags == LpFlags::Redirect => {
                self.set_item_id(off, ItemId::DEAD_STUB);
                true
            }
            _ => false,
        }
    }

    /// Make DEAD line pointers UNUSED (VACUUM, once no index entry points at them), so
    /// [`add_item`](Self::add_item) may reuse them; trailing ones go at the next
    /// [`compact`](Self::compact). Returns how many changed; other states are left alone.
    pub fn set_unused(&mut self, offsets: &[OffsetNumber]) -> usize {
        let mut n = 0;
        for &off in offsets {
            if self.as_page().item_id(off).map(|id| id.flags) == Some(LpFlags::Dead) {
                self.set_item_id(off, ItemId::UNUSED);
                n += 1;
            }
        }
        if n > 0 {
            let flags = self.as_page().flags();
            self.set_flags(flags | PD_HAS_FREE_LINES);
        }
        n
    }

    /// Make a NORMAL or DEAD line pointer a REDIRECT to `to` (HOT pruning), dropping its
    /// storage. False, changing nothing, for an UNUSED or out-of-range `off`.
    pub fn set_redirect(&mut self, off: OffsetNumber, to: OffsetNumber) -> bool {
        match self.as_page().item_id(off) {
            Some(id) if id.flags != LpFlags::Unused => {
                self.set_item_id(
                    off,
                    ItemId {
                        off: to,
                        flags: LpFlags::Redirect,
                        len: 0,
                    },
                );
                true
            }
            _ => false,
        }
    }

    /// Replace the NORMAL item at `off` with `item`, keeping its line pointer (and so its
    /// item pointer). Overwrites in place when the new item fits the old one's storage,
    /// otherwise takes fresh storage from the free space, leaving the old storage as
    /// fragmentation for [`compact`](Self::compact). False, changing nothing, if it does
    /// not fit.
    pub fn replace_item(&mut self, off: OffsetNumber, item: &[u8]) -> bool {
        self.assert_initialised();
        assert!(
            !item.is_empty() && item.len() <= MAX_ITEM_SIZE,
            "item of {} bytes: must be 1..={MAX_ITEM_SIZE}",
            item.len()
        );
        let page = self.as_page();
        let id = match page.item_id(off) {
            Some(id) if id.flags == LpFlags::Normal => id,
            other => panic!("replace_item({off}): line pointer is {other:?}, not NORMAL"),
        };
        let size = maxalign(item.len());
        let start = if size <= maxalign(id.len as usize) {
            id.off as usize
        } else {
            let (lower, upper) = (page.lower() as usize, page.upper() as usize);
            if upper < lower + size {
                return false;
            }
            self.set_upper(upper - size);
            upper - size
        };
        self.data[start..start + item.len()].copy_from_slice(item);
        self.set_item_id(
            off,
            ItemId {
                off: start as u16,
                flags: LpFlags::Normal,
                len: item.len() as u16,
            },
        );
        true
    }

    /// Reclaim the storage of DEAD items and fragmentation (`PageRepairFragmentation`):
    /// NORMAL items are packed against the special space, DEAD line pointers stay as
    /// stubs without storage, and trailing UNUSED ones are removed.
    ///
    /// A DEAD line pointer stays DEAD because index entries may still point at it: only
    /// VACUUM, after removing those entries, makes it UNUSED ([`set_unused`]) and so
    /// reusable (page rule 4).
    ///
    /// [`set_unused`]: Self::set_unused
    ///
    /// A page whose NORMAL items add up to more than the space between `pd_lower` and
    /// `pd_special` (items overlapping, or two line pointers sharing one) cannot be
    /// packed: DATA_CORRUPTED, as PostgreSQL's `PageRepairFragmentation` says, and the
    /// page is left as it was.
    pub fn compact(&mut self) -> PgResult<()> {
        self.assert_initialised();
        let copy: Box<[u8; BLCKSZ]> = Box::new(*self.data);
        let old = Page { data: &copy };
        let special = old.special() as usize;
        let max_off = old.max_offset();
        let total: usize = (1..=max_off)
            .map_while(|off| old.item_id(off))
            .filter(|id| id.flags == LpFlags::Normal)
            .map(|id| maxalign(id.len as usize))
            .sum();
        let available = special.saturating_sub(old.lower() as usize);
        if total > available {
            return Err(PgError::new(
                SqlState::DATA_CORRUPTED,
                format!("corrupted item lengths: total {total}, available space {available}"),
            ));
        }
        let mut upper = special;
        let mut last_used = 0;
        let mut unused_seen = false;
        // An UNUSED line pointer followed by a used one survives the truncation below.
        let mut unused_below_last = false;
        for off in 1..=max_off {
            let Some(id) = old.item_id(off) else { break };
            match id.flags {
                LpFlags::Normal => {
                    let len = id.len as usize;
                    upper -= maxalign(len);
                    let src = id.off as usize;
                    self.data[upper..upper + len].copy_from_slice(&copy[src..src + len]);
                    self.data[upper + len..upper + maxalign(len)].fill(0);
                    self.set_item_id(
                        off,
                        ItemId {
                            off: upper as u16,
                            ..id
                        },
                    );
                    last_used = off;
                    unused_below_last |= unused_seen;
                }
                LpFlags::Redirect => {
                    last_used = off;
                    unused_below_last |= unused_seen;
                }
                LpFlags::Dead => {
                    self.set_item_id(off, ItemId::DEAD_STUB);
                    last_used = off;
                    unused_below_last |= unused_seen;
                }
                LpFlags::Unused => {
                    self.set_item_id(off, ItemId::UNUSED);
                    unused_seen = true;
                }
            }
        }
        let lower = SIZE_OF_PAGE_HEADER + last_used as usize * SIZE_OF_ITEM_ID;
        self.set_lower(lower);
        self.set_upper(upper);
        // Zero the hole so deleted data does not linger and the page is deterministic.
        self.data[lower..upper].fill(0);
        let mut flags = old.flags() & !(PD_HAS_FREE_LINES | PD_PAGE_FULL);
        if unused_below_last {
            flags |= PD_HAS_FREE_LINES;
        }
        self.set_flags(flags);
        Ok(())
    }
}

/// The checksum a page should carry when it is block `block` (see the module header).
pub fn checksum(data: &[u8; BLCKSZ], block: BlockNumber) -> u16 {
    let mut crc = crc32c::crc32c(&data[..PD_CHECKSUM]);
    crc = crc32c::crc32c_append(crc, &[0, 0]);
    crc = crc32c::crc32c_append(crc, &data[PD_CHECKSUM + 2..]);
    crc = crc32c::crc32c_append(crc, &block.to_le_bytes());
    (crc ^ (crc >> 16)) as u16
}

/// Stamp the checksum on a page about to be written as block `block`. A new (all-zero)
/// page is left as it is.
pub fn set_checksum(data: &mut [u8; BLCKSZ], block: BlockNumber) {
    if Page::new(data).is_new() {
        return;
    }
    let sum = checksum(data, block);
    write_u16(data, PD_CHECKSUM, sum);
}

/// Check a page just read from disk as block `block` of `rel` (`PageIsVerified`): an
/// all-zero page, or a page whose checksum matches and whose header and line pointers are
/// consistent. Any other page is an error with [`SqlState::DATA_CORRUPTED`].
pub fn verify(data: &[u8; BLCKSZ], rel: RelId, block: BlockNumber) -> PgResult<()> {
    let corrupt = |detail: String| {
        PgError::new(
            SqlState::DATA_CORRUPTED,
            format!("invalid page in block {block} of relation {}", relpath(rel)),
        )
        .with_detail(detail)
    };
    let page = Page::new(data);
    if page.is_new() {
        if data.iter().all(|b| *b == 0) {
            return Ok(());
        }
        return Err(corrupt("page has pd_upper = 0 but is not all zeros".into()));
    }
    let expected = page.checksum();
    let calculated = checksum(data, block);
    if expected != calculated {
        return Err(corrupt(format!(
            "page verification failed, calculated checksum {calculated} but expected {expected}"
        )));
    }
    let (lower, upper, special) = (
        page.lower() as usize,
        page.upper() as usize,
        page.special() as usize,
    );
    if page.pagesize_version() != PAGESIZE_VERSION {
        return Err(corrupt(format!(
            "page size and version {:#06x}, expected {PAGESIZE_VERSION:#06x}",
            page.pagesize_version()
        )));
    }
    if page.flags() & !PD_VALID_FLAG_BITS != 0 {
        return Err(corrupt(format!("unknown page flags {:#06x}", page.flags())));
    }
    if !(SIZE_OF_PAGE_HEADER <= lower
        && lower <= upper
        && upper <= special
        && special <= BLCKSZ
        && special == maxalign(special)
        && (lower - SIZE_OF_PAGE_HEADER).is_multiple_of(SIZE_OF_ITEM_ID))
    {
        return Err(corrupt(format!(
            "inconsistent header: pd_lower {lower}, pd_upper {upper}, pd_special {special}"
        )));
    }
    for off in 1..=page.max_offset() {
        let Some(id) = page.item_id(off) else {
            return Err(corrupt(format!("line pointer {off} is unreadable")));
        };
        let (start, len) = (id.off as usize, id.len as usize);
        let ok = match id.flags {
            LpFlags::Unused => start == 0 && len == 0,
            LpFlags::Normal | LpFlags::Dead
                if len > 0 && start >= upper && start + len <= special =>
            {
                start == maxalign(start)
            }
            // A stub whose storage compaction reclaimed (page rule 4).
            LpFlags::Dead => start == 0 && len == 0,
            LpFlags::Normal => false,
            LpFlags::Redirect => len == 0 && start >= 1 && start <= page.max_offset() as usize,
        };
        if !ok {
            return Err(corrupt(format!(
                "line pointer {off} is invalid: {:?} offset {start} length {len}",
                id.flags
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_page() -> Box<[u8; BLCKSZ]> {
        let mut data = Box::new([0u8; BLCKSZ]);
        PageMut::new(&mut data).init(0);
        data
    }

    #[test]
    fn line_pointer_encoding_matches_postgres_bitfields() {
        let id = ItemId {
            off: 8152,
            flags: LpFlags::Normal,
            len: 40,
        };
        assert_eq!(id.encode(), 8152 | 1 << 15 | 40 << 17);
        assert_eq!(ItemId::decode(id.encode()), id);
        let dead = ItemId {
            flags: LpFlags::Dead,
            ..id
        };
        assert_eq!(ItemId::decode(dead.encode()), dead);
    }

    #[test]
    fn new_and_initialised() {
        let zero = Box::new([0u8; BLCKSZ]);
        assert!(Page::new(&zero).is_new());
        assert_eq!(Page::new(&zero).max_offset(), 0);
        assert_eq!(Page::new(&zero).free_space(), 0);
        assert!(verify(&zero, 1, 0).is_ok());
        let data = new_page();
        let page = Page::new(&data);
        assert!(!page.is_new());
        assert_eq!(page.lower(), 24);
        assert_eq!(page.upper(), 8192);
        assert_eq!(page.special(), 8192);
        assert_eq!(page.pagesize_version(), 8192 | 4);
        assert_eq!(page.free_space(), 8192 - 24 - 4);
        assert_eq!(page.max_offset(), 0);
    }

    #[test]
    fn add_get_and_fill() {
        let mut data = new_page();
        let mut page = PageMut::new(&mut data);
        assert_eq!(page.add_item(b"hello"), Some(1));
        assert_eq!(page.add_item(b"world!!!!"), Some(2));
        assert_eq!(page.as_page().get_item(1), Some(&b"hello"[..]));
        assert_eq!(page.as_page().get_item(2), Some(&b"world!!!!"[..]));
        assert_eq!(page.as_page().get_item(3), None);
        assert_eq!(page.as_page().get_item(0), None);
        assert_eq!(page.as_page().upper() as usize, BLCKSZ - 8 - 16);
        page.item_mut(1).expect("item")[0] = b'j';
        assert_eq!(page.as_page().get_item(1), Some(&b"jello"[..]));
        // 100-byte items take 104 + 4 bytes each.
        let mut n = 2;
        while page.add_item(&[7u8; 100]).is_some() {
            n += 1;
        }
        assert_eq!(n, 2 + (BLCKSZ - 24 - 8 - 16 - 8) / 108);
        assert!(page.as_page().free_space() < 104);
        let mut big = new_page();
        let mut big = PageMut::new(&mut big);
        assert_eq!(big.add_item(&[1u8; MAX_ITEM_SIZE]), Some(1));
        assert_eq!(big.as_page().free_space(), 0);
        assert_eq!(big.add_item(b"x"), None);
    }

    #[test]
    fn dead_items_are_compacted_and_reused() {
        let mut data = new_page();
        let mut page = PageMut::new(&mut data);
        for i in 0..10u8 {
            assert_eq!(page.add_item(&[i; 500]), Some(i as u16 + 1));
        }
        let before = page.as_page().free_space();
        assert!(!page.as_page().needs_compaction());
        assert!(page.mark_dead(3));
        assert!(!page.mark_dead(3), "already dead");
        assert!(page.mark_dead(10));
        assert_eq!(page.as_page().get_item(3), None);
        assert!(page.item_mut(3).is_none());
        assert!(page.as_page().needs_compaction());
        assert_eq!(page.as_page().fragmented_space(), 1008);
        page.compact().expect("a consistent page compacts");
        assert!(!page.as_page().needs_compaction());
        // DEAD line pointers stay, without storage, until VACUUM says no index needs them.
        assert_eq!(page.as_page().max_offset(), 10);
        assert_eq!(page.as_page().free_space(), before + 1008);
        for i in [1u8, 2, 4, 5, 6, 7, 8, 9] {
            assert_eq!(page.as_page().get_item(i as u16), Some(&[i - 1; 500][..]));
        }
        assert_eq!(
            page.as_page().item_id(3).map(|id| id.flags),
            Some(LpFlags::Dead)
        );
        let mut stubs = data.clone();
        set_checksum(&mut stubs, 9);
        verify(&stubs, 1, 9).expect("a page with DEAD stubs verifies");
        let mut page = PageMut::new(&mut data);
        assert_eq!(page.add_item(b"new"), Some(11), "a DEAD stub is not reused");
        assert_eq!(page.set_unused(&[3, 10, 11]), 2, "only DEAD ones change");
        assert_eq!(page.as_page().item_id(3), Some(ItemId::UNUSED));
        assert_eq!(
            page.add_item(b"reuse"),
            Some(3),
            "UNUSED line pointer reused"
        );
        assert_eq!(page.add_item(b"again"), Some(10));
        assert_eq!(page.add_item(b"append"), Some(12));
        set_checksum(&mut data, 9);
        verify(&data, 1, 9).expect("compacted page verifies");
    }

    #[test]
    fn overlapping_items_do_not_compact() {
        // Every line pointer names the same 4000-byte item: together more than the page.
        let mut data = new_page();
        let mut page = PageMut::new(&mut data);
        assert_eq!(page.add_item(&[7; 4000]), Some(1));
        let id = page.as_page().item_id(1).expect("item 1");
        page.set_item_id(2, id);
        page.set_item_id(3, id);
        page.set_lower(SIZE_OF_PAGE_HEADER + 3 * SIZE_OF_ITEM_ID);
        let before = data.clone();
        let e = PageMut::new(&mut data).compact().unwrap_err();
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
        assert_eq!(
            e.message,
            "corrupted item lengths: total 12000, available space 8156"
        );
        assert_eq!(data, before, "left as it was");
    }

    #[test]
    fn replace_in_place_or_moving() {
        let mut data = new_page();
        let mut page = PageMut::new(&mut data);
        page.add_item(&[1u8; 20]);
        page.add_item(&[2u8; 20]);
        let upper = page.as_page().upper();
        assert!(
            page.replace_item(1, &[3u8; 24]),
            "fits the old 24-byte slot"
        );
        assert_eq!(page.as_page().upper(), upper);
        assert_eq!(page.as_page().get_item(1), Some(&[3u8; 24][..]));
        assert!(page.replace_item(1, &[4u8; 100]), "moves to free space");
        assert_eq!(page.as_page().get_item(1), Some(&[4u8; 100][..]));
        assert_eq!(page.as_page().fragmented_space(), 24);
        assert!(!page.replace_item(2, &[5u8; MAX_ITEM_SIZE]));
        assert_eq!(page.as_page().get_item(2), Some(&[2u8; 20][..]));
        page.compact().expect("a consistent page compacts");
        assert_eq!(page.as_page().fragmented_space(), 0);
        assert_eq!(page.as_page().get_item(1), Some(&[4u8; 100][..]));
        assert_eq!(page.as_page().get_item(2), Some(&[2u8; 20][..]));
    }

    #[test]
    fn checksum_detects_any_flipped_byte() {
        let mut data = new_page();
        PageMut::new(&mut data)
            .add_item(b"some tuple")
            .expect("fits");
        set_checksum(&mut data, 42);
        verify(&data, 1, 42).expect("valid");
        let e = verify(&data, 1, 43).expect_err("wrong block");
        assert_eq!(e.code, SqlState::DATA_CORRUPTED);
        assert_eq!(e.message, "invalid page in block 43 of relation base/1");
        for at in [0usize, 9, 13, 100, BLCKSZ - 1] {
            let mut bad = data.clone();
            bad[at] ^= 0x10;
            assert!(verify(&bad, 1, 42).is_err(), "flip at {at}");
        }
    }

    #[test]
    fn verify_rejects_bad_headers_even_with_good_checksums() {
        let good = new_page();
        let cases: [(usize, u16); 5] = [
            (PD_LOWER, 10),
            (PD_UPPER, 9000),
            (PD_SPECIAL, 8191),
            (PD_PAGESIZE_VERSION, 8192 | 3),
            (PD_FLAGS, 0x80),
        ];
        for (at, v) in cases {
            let mut bad = good.clone();
            write_u16(&mut bad, at, v);
            set_checksum(&mut bad, 0);
            let e = verify(&bad, 7, 0).expect_err("bad header");
            assert_eq!(e.code, SqlState::DATA_CORRUPTED);
        }
        // A line pointer pointing outside the item area.
        let mut bad = good.clone();
        PageMut::new(&mut bad).add_item(b"x").expect("fits");
        let raw = ItemId {
            off: 8,
            flags: LpFlags::Normal,
            len: 1,
        };
        bad[24..28].copy_from_slice(&raw.encode().to_le_bytes());
        set_checksum(&mut bad, 0);
        assert!(verify(&bad, 7, 0).is_err());
        // pd_upper = 0 but garbage elsewhere.
        let mut bad = Box::new([0u8; BLCKSZ]);
        bad[100] = 1;
        assert!(verify(&bad, 7, 0).is_err());
    }
}
