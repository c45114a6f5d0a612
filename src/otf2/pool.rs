//! The memory libotf2 writes its chunks in, bounded.
//!
//! Left to itself, libotf2 gives every writer a pool of 128 MiB and
//! writes a location's events out only when that pool is full or the
//! writer is closed: the whole archive stayed in memory (peak RSS was
//! the archive's size plus 10 MiB, 92 MiB for 80 MB of libRastro). With
//! these callbacks a buffer holds one chunk: when it asks for a second,
//! it is refused, and libotf2 then writes the full one to its file and
//! asks again (`OTF2_Buffer_RequestNewChunk`); the chunk given back is
//! handed out again. The chunks written are the same either way, so are
//! the files.
//!
//! What stays is libotf2's own: its file layer gathers a file's writes
//! in a buffer of 4 MiB (`OTF2_FILE_BUFFER_SIZE`) before it writes
//! them. A location so holds at most one chunk and 4 MiB, however long
//! the run. Chunks of 4 MiB, which that layer writes straight through,
//! saved 6 MiB on 110 MB of MPE (128 locations) but cost 50 ms more:
//! libotf2 fills the rest of each location's last chunk when it closes.

use super::ffi::{FileType, LocationRef, MemoryCallbacks};
use std::alloc::{alloc, dealloc, Layout};
use std::ffi::c_void;

/// The chunks of one buffer (libotf2 keeps its pointer for us): those it
/// holds, and those it gave back, kept for its next request (a chunk
/// freed and allocated again cost a page fault a page).
#[derive(Default)]
struct Chunks {
    list: Vec<(*mut u8, Layout)>,
    spare: Vec<(*mut u8, Layout)>,
}

/// The callbacks (no user data: each buffer's chunks are its own).
pub static CALLBACKS: MemoryCallbacks = MemoryCallbacks {
    allocate: Some(allocate),
    free_all: Some(free_all),
};

extern "C" fn allocate(
    _: *mut c_void,
    _: FileType,
    _: LocationRef,
    per_buffer: *mut *mut c_void,
    size: u64,
) -> *mut c_void {
    // SAFETY: `per_buffer` is the slot libotf2 keeps for this buffer
    // (null at first, then our Chunks); libotf2 calls from the encoder's
    // thread only.
    unsafe {
        if (*per_buffer).is_null() {
            *per_buffer = Box::into_raw(Box::<Chunks>::default()).cast();
        }
        let chunks = &mut *(*per_buffer).cast::<Chunks>();
        let Ok(size) = usize::try_from(size) else {
            return std::ptr::null_mut();
        };
        if !chunks.list.is_empty() {
            // libotf2 writes this buffer out, frees it, and asks again.
            return std::ptr::null_mut();
        }
        let Ok(layout) = Layout::from_size_align(size.max(1), 64) else {
            return std::ptr::null_mut();
        };
        let p = match chunks.spare.iter().position(|&(_, l)| l == layout) {
            Some(i) => chunks.spare.swap_remove(i).0,
            None => {
                let p = alloc(layout);
                if p.is_null() {
                    return std::ptr::null_mut();
                }
                p
            }
        };
        chunks.list.push((p, layout));
        p.cast()
    }
}

extern "C" fn free_all(
    _: *mut c_void,
    _: FileType,
    _: LocationRef,
    per_buffer: *mut *mut c_void,
    last: bool,
) {
    // SAFETY: as in `allocate`; every pointer freed was allocated there
    // with its layout, and libotf2 no longer uses any of them.
    unsafe {
        if (*per_buffer).is_null() {
            return;
        }
        let chunks = &mut *(*per_buffer).cast::<Chunks>();
        chunks.spare.append(&mut chunks.list);
        if last {
            for (p, layout) in chunks.spare.drain(..) {
                dealloc(p, layout);
            }
            drop(Box::from_raw((*per_buffer).cast::<Chunks>()));
            *per_buffer = std::ptr::null_mut();
        }
    }
}
