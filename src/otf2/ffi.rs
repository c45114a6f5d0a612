//! The part of libotf2's writing API the OTF2 sink calls, opened at run
//! time (Debian's `libopen-trace-format2-10`): a build needs neither the
//! headers nor the library, and a run that asks for OTF2 without it
//! says which package to install. Types and constants are those of OTF2
//! 3.0's headers (`otf2/OTF2_*.h`); enums are one byte there unless said.

// The constants are OTF2's, named as its headers name them.
#![allow(missing_docs)]

use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

/// `OTF2_ErrorCode`.
pub type Code = i32;
/// An opaque handle.
pub type Handle = *mut c_void;

pub const SUCCESS: Code = 0;
pub const FILEMODE_WRITE: u8 = 0;
pub const SUBSTRATE_POSIX: u8 = 1;
pub const COMPRESSION_NONE: u8 = 1;
pub const FLUSH: u8 = 1;
pub const UNDEFINED_U32: u32 = u32::MAX;
pub const UNDEFINED_U64: u64 = u64::MAX;
pub const REGION_ROLE_FUNCTION: u8 = 1;
pub const PARADIGM_USER: u8 = 1;
pub const REGION_FLAG_NONE: u32 = 0;
pub const LOCATION_GROUP_PROCESS: u8 = 1;
pub const LOCATION_CPU_THREAD: u8 = 1;
pub const GROUP_COMM_LOCATIONS: u8 = 4;
pub const GROUP_COMM_GROUP: u8 = 5;
pub const PARADIGM_MPI: u8 = 4;
pub const GROUP_FLAG_NONE: u32 = 0;
pub const COMM_FLAG_NONE: u32 = 0;
pub const METRIC_TYPE_OTHER: u8 = 0;
/// A value that holds from its time to the next one (a Pajé variable).
pub const METRIC_ABSOLUTE_NEXT: u8 = 49;
pub const TYPE_DOUBLE: u8 = 10;
pub const BASE_DECIMAL: u8 = 1;
pub const METRIC_ASYNCHRONOUS: u8 = 2;
pub const RECORDER_KIND_ABSTRACT: u8 = 1;
pub const PARAMETER_STRING: u8 = 0;
pub const CHUNK_SIZE_MIN: u64 = 256 << 10;

/// `OTF2_FileType`.
pub type FileType = u8;
/// `OTF2_LocationRef`.
pub type LocationRef = u64;

/// `OTF2_MemoryCallbacks`.
#[repr(C)]
pub struct MemoryCallbacks {
    pub allocate: Option<
        extern "C" fn(*mut c_void, FileType, LocationRef, *mut *mut c_void, u64) -> *mut c_void,
    >,
    pub free_all: Option<extern "C" fn(*mut c_void, FileType, LocationRef, *mut *mut c_void, bool)>,
}

/// `OTF2_FlushCallbacks`.
#[repr(C)]
pub struct FlushCallbacks {
    pub pre: Option<extern "C" fn(*mut c_void, u8, u64, *mut c_void, bool) -> u8>,
    pub post: Option<extern "C" fn(*mut c_void, u8, u64) -> u64>,
}

macro_rules! api {
    ($($name:ident = $sym:literal : fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The library's entry points.
        #[allow(non_snake_case)]
        pub struct Lib {
            _lib: libloading::Library,
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }

        impl Lib {
            fn open(lib: libloading::Library) -> Result<Lib, libloading::Error> {
                // SAFETY: each symbol is read with the signature OTF2 3.0's
                // headers give it.
                unsafe {
                    Ok(Lib {
                        $($name: *lib.get($sym)?,)*
                        _lib: lib,
                    })
                }
            }
        }
    };
}

api! {
    archive_open = b"OTF2_Archive_Open\0": fn(*const c_char, *const c_char, u8, u64, u64, u8, u8) -> Handle;
    archive_close = b"OTF2_Archive_Close\0": fn(Handle) -> Code;
    set_flush = b"OTF2_Archive_SetFlushCallbacks\0": fn(Handle, *const FlushCallbacks, *mut c_void) -> Code;
    set_memory = b"OTF2_Archive_SetMemoryCallbacks\0": fn(Handle, *const MemoryCallbacks, *mut c_void) -> Code;
    set_serial = b"OTF2_Archive_SetSerialCollectiveCallbacks\0": fn(Handle) -> Code;
    set_creator = b"OTF2_Archive_SetCreator\0": fn(Handle, *const c_char) -> Code;
    open_evt_files = b"OTF2_Archive_OpenEvtFiles\0": fn(Handle) -> Code;
    close_evt_files = b"OTF2_Archive_CloseEvtFiles\0": fn(Handle) -> Code;
    evt_writer = b"OTF2_Archive_GetEvtWriter\0": fn(Handle, u64) -> Handle;
    close_evt_writer = b"OTF2_Archive_CloseEvtWriter\0": fn(Handle, Handle) -> Code;
    open_def_files = b"OTF2_Archive_OpenDefFiles\0": fn(Handle) -> Code;
    close_def_files = b"OTF2_Archive_CloseDefFiles\0": fn(Handle) -> Code;
    def_writer = b"OTF2_Archive_GetDefWriter\0": fn(Handle, u64) -> Handle;
    close_def_writer = b"OTF2_Archive_CloseDefWriter\0": fn(Handle, Handle) -> Code;
    global_def_writer = b"OTF2_Archive_GetGlobalDefWriter\0": fn(Handle) -> Handle;
    events_of = b"OTF2_EvtWriter_GetNumberOfEvents\0": fn(Handle, *mut u64) -> Code;
    enter = b"OTF2_EvtWriter_Enter\0": fn(Handle, Handle, u64, u32) -> Code;
    leave = b"OTF2_EvtWriter_Leave\0": fn(Handle, Handle, u64, u32) -> Code;
    mpi_send = b"OTF2_EvtWriter_MpiSend\0": fn(Handle, Handle, u64, u32, u32, u32, u64) -> Code;
    mpi_recv = b"OTF2_EvtWriter_MpiRecv\0": fn(Handle, Handle, u64, u32, u32, u32, u64) -> Code;
    metric = b"OTF2_EvtWriter_Metric\0": fn(Handle, Handle, u64, u32, u8, *const u8, *const u64) -> Code;
    parameter_string = b"OTF2_EvtWriter_ParameterString\0": fn(Handle, Handle, u64, u32, u32) -> Code;
    clock_properties = b"OTF2_GlobalDefWriter_WriteClockProperties\0": fn(Handle, u64, u64, u64, u64) -> Code;
    string = b"OTF2_GlobalDefWriter_WriteString\0": fn(Handle, u32, *const c_char) -> Code;
    region = b"OTF2_GlobalDefWriter_WriteRegion\0": fn(Handle, u32, u32, u32, u32, u8, u8, u32, u32, u32, u32) -> Code;
    system_tree_node = b"OTF2_GlobalDefWriter_WriteSystemTreeNode\0": fn(Handle, u32, u32, u32, u32) -> Code;
    location_group = b"OTF2_GlobalDefWriter_WriteLocationGroup\0": fn(Handle, u32, u32, u8, u32, u32) -> Code;
    location = b"OTF2_GlobalDefWriter_WriteLocation\0": fn(Handle, u64, u32, u8, u64, u32) -> Code;
    group = b"OTF2_GlobalDefWriter_WriteGroup\0": fn(Handle, u32, u32, u8, u8, u32, u32, *const u64) -> Code;
    comm = b"OTF2_GlobalDefWriter_WriteComm\0": fn(Handle, u32, u32, u32, u32, u32) -> Code;
    metric_member = b"OTF2_GlobalDefWriter_WriteMetricMember\0": fn(Handle, u32, u32, u32, u8, u8, u8, u8, i64, u32) -> Code;
    metric_class = b"OTF2_GlobalDefWriter_WriteMetricClass\0": fn(Handle, u32, u8, *const u32, u8, u8) -> Code;
    parameter = b"OTF2_GlobalDefWriter_WriteParameter\0": fn(Handle, u32, u32, u8) -> Code;
    describe = b"OTF2_Error_GetDescription\0": fn(Code) -> *const c_char;
}

/// The names the library goes by: Debian's runtime package, then the
/// development link.
const NAMES: [&str; 3] = [
    "libopen-trace-format2.so.10",
    "libopen-trace-format2.so",
    "libotf2.so",
];

/// The library, opened once; an error says what to install.
pub fn lib() -> Result<&'static Lib, String> {
    static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();
    LIB.get_or_init(|| {
        let mut last = String::new();
        for name in NAMES {
            // SAFETY: loading libotf2 runs no initialiser with effects
            // beyond the library itself.
            match unsafe { libloading::Library::new(name) } {
                Ok(l) => return Lib::open(l).map_err(|e| format!("{name}: {e}")),
                Err(e) => last = e.to_string(),
            }
        }
        Err(format!(
            "--format otf2 needs libotf2 (Debian: apt-get install libopen-trace-format2-10): {last}"
        ))
    })
    .as_ref()
    .map_err(Clone::clone)
}

impl Lib {
    /// An error code as an I/O error that says what failed.
    pub fn check(&self, code: Code, what: &str) -> std::io::Result<()> {
        if code == SUCCESS {
            return Ok(());
        }
        // SAFETY: the library returns a static string for every code.
        let text = unsafe {
            let p = (self.describe)(code);
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Err(std::io::Error::other(format!(
            "OTF2 {what}: {text} (code {code})"
        )))
    }
}

/// Every buffer is written out when full, and at the end.
pub extern "C" fn pre_flush(_: *mut c_void, _: u8, _: u64, _: *mut c_void, _: bool) -> u8 {
    FLUSH
}
