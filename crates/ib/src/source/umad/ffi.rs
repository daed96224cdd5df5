//! Binding to libibumad (rdma-core) loaded at run time with libloading.
//!
//! No link-time C dependency: the daemon starts without libibumad and only the umad source
//! needs it. All `unsafe` of the project lives in this file. Under umad2sim (LD_PRELOAD)
//! libibumad's open/read/write/poll calls are interposed and go to ibsim.

use std::ffi::{c_char, c_int, c_long, c_uint, c_void, CStr, CString};
use std::sync::OnceLock;

use libloading::Library;

/// The shared object we load.
pub const LIBRARY: &str = "libibumad.so.3";

const ETIMEDOUT: c_int = 110;
const ENOSPC: c_int = 28;
const CA_NAME_LEN: usize = 20;
const MAX_CAS: usize = 32;
const CA_MAX_PORTS: usize = 10;

/// Errors from libibumad or from choosing a CA/port.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UmadError {
    #[error("{LIBRARY} not found ({0}): install libibumad3 (rdma-core) or use --source sim")]
    LibraryMissing(String),
    #[error("{LIBRARY} lacks symbol {0}: rdma-core too old?")]
    Symbol(String),
    #[error("umad_init failed: is the ib_umad kernel module loaded (/sys/class/infiniband_mad)?")]
    Init,
    #[error("no InfiniBand CA found (load ib_umad; under ibsim run with LD_PRELOAD=libumad2sim.so and IBSIM_SOCKNAME) or use --source sim")]
    NoCa,
    #[error("CA {name:?} not found (available: {available})")]
    CaNotFound { name: String, available: String },
    /// The CA is listed (sysfs) but libibumad cannot read it: the usual causes
    /// are a missing /dev/infiniband (ib_umad not loaded, or a container
    /// without the device), its permissions, or a mismatched libibumad.
    #[error("CA {0:?} is listed but cannot be opened: check that /dev/infiniband/umad* exists (modprobe ib_umad; pass the devices into a container), that this user may read it (root, or group ibsnmpd: the package's udev rule gives it the devices), and that libibumad3 matches the kernel")]
    CaUnreadable(String),
    #[error("CA {ca:?} has no port {port} (ports: {ports})")]
    PortNotFound { ca: String, port: u8, ports: String },
    #[error("CA {0:?} has no active port: give one with --source umad:CA:PORT")]
    NoActivePort(String),
    #[error("umad_open_port({ca}, {port}) failed ({code}): check permissions on /dev/infiniband/umad* (root, or group ibsnmpd: the package's udev rule gives it the devices)")]
    OpenPort { ca: String, port: u8, code: i32 },
    #[error("umad_register(class {class:#04x}) failed ({code})")]
    Register { class: u8, code: i32 },
    #[error("umad_send failed ({0})")]
    Send(i32),
    #[error("umad_recv failed ({0})")]
    Recv(i32),
    #[error("invalid argument: {0}")]
    Invalid(String),
}

/// `umad_port_t` from <infiniband/umad.h>.
#[repr(C)]
#[allow(dead_code)] // mirrors the C layout; not every field is read
struct RawPort {
    ca_name: [c_char; CA_NAME_LEN],
    portnum: c_int,
    base_lid: c_uint,
    lmc: c_uint,
    sm_lid: c_uint,
    sm_sl: c_uint,
    state: c_uint,
    phys_state: c_uint,
    rate: c_uint,
    capmask: u32,
    gid_prefix: u64,
    port_guid: u64,
    pkeys_size: c_uint,
    pkeys: *mut u16,
    link_layer: [c_char; CA_NAME_LEN],
}

/// `umad_ca_t` from <infiniband/umad.h>.
#[repr(C)]
#[allow(dead_code)] // mirrors the C layout; not every field is read
struct RawCa {
    ca_name: [c_char; CA_NAME_LEN],
    node_type: c_uint,
    numports: c_int,
    fw_ver: [c_char; 20],
    ca_type: [c_char; 40],
    hw_ver: [c_char; 20],
    node_guid: u64,
    system_guid: u64,
    ports: [*mut RawPort; CA_MAX_PORTS],
}

/// The leading fields of `ib_mad_addr_t` we read (the struct is 44 bytes; we only read).
#[repr(C)]
#[allow(dead_code)] // mirrors the C layout; not every field is read
struct RawMadAddr {
    qpn: u32,
    qkey: u32,
    lid: u16,
    sl: u8,
    path_bits: u8,
}

type FnVoid = unsafe extern "C" fn() -> c_int;
type FnCasNames = unsafe extern "C" fn(*mut [c_char; CA_NAME_LEN], c_int) -> c_int;
type FnGetCa = unsafe extern "C" fn(*const c_char, *mut RawCa) -> c_int;
type FnReleaseCa = unsafe extern "C" fn(*mut RawCa) -> c_int;
type FnGetPort = unsafe extern "C" fn(*const c_char, c_int, *mut RawPort) -> c_int;
type FnReleasePort = unsafe extern "C" fn(*mut RawPort) -> c_int;
type FnOpenPort = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
type FnClosePort = unsafe extern "C" fn(c_int) -> c_int;
type FnGetMad = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type FnSize = unsafe extern "C" fn() -> usize;
type FnStatus = unsafe extern "C" fn(*mut c_void) -> c_int;
type FnGetMadAddr = unsafe extern "C" fn(*mut c_void) -> *mut RawMadAddr;
type FnSetAddr = unsafe extern "C" fn(*mut c_void, c_int, c_int, c_int, c_int) -> c_int;
type FnSetPkey = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
type FnSend = unsafe extern "C" fn(c_int, c_int, *mut c_void, c_int, c_int, c_int) -> c_int;
type FnRecv = unsafe extern "C" fn(c_int, *mut c_void, *mut c_int, c_int) -> c_int;
type FnRegister = unsafe extern "C" fn(c_int, c_int, c_int, u8, *mut c_long) -> c_int;
type FnUnregister = unsafe extern "C" fn(c_int, c_int) -> c_int;

/// The loaded library and the function pointers we use.
pub struct Umad {
    get_cas_names: FnCasNames,
    get_ca: FnGetCa,
    release_ca: FnReleaseCa,
    get_port: FnGetPort,
    release_port: FnReleasePort,
    open_port: FnOpenPort,
    close_port: FnClosePort,
    get_mad: FnGetMad,
    size: FnSize,
    status: FnStatus,
    get_mad_addr: FnGetMadAddr,
    set_addr: FnSetAddr,
    set_pkey: FnSetPkey,
    send: FnSend,
    recv: FnRecv,
    register: FnRegister,
    unregister: FnUnregister,
    /// Keeps the function pointers above valid: never unloaded (lives in a static).
    _lib: Library,
}

static UMAD: OnceLock<Result<Umad, UmadError>> = OnceLock::new();

/// Loads libibumad once per process and calls `umad_init`.
pub fn library() -> Result<&'static Umad, UmadError> {
    UMAD.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Umad, UmadError> {
    // SAFETY: loading libibumad runs its ELF constructors, which only initialise static
    // state; the library is a plain C library with no unsound initialisers.
    let lib =
        unsafe { Library::new(LIBRARY) }.map_err(|e| UmadError::LibraryMissing(e.to_string()))?;
    macro_rules! sym {
        ($name:literal, $ty:ty) => {{
            // SAFETY: the symbol is declared in <infiniband/umad.h> with exactly the C
            // signature `$ty` mirrors; the pointer is copied out and stays valid because
            // `lib` is stored next to it and never dropped (static OnceLock).
            let s: libloading::Symbol<$ty> = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                .map_err(|_| UmadError::Symbol($name.to_string()))?;
            *s
        }};
    }
    let init: FnVoid = sym!("umad_init", FnVoid);
    let umad = Umad {
        get_cas_names: sym!("umad_get_cas_names", FnCasNames),
        get_ca: sym!("umad_get_ca", FnGetCa),
        release_ca: sym!("umad_release_ca", FnReleaseCa),
        get_port: sym!("umad_get_port", FnGetPort),
        release_port: sym!("umad_release_port", FnReleasePort),
        open_port: sym!("umad_open_port", FnOpenPort),
        close_port: sym!("umad_close_port", FnClosePort),
        get_mad: sym!("umad_get_mad", FnGetMad),
        size: sym!("umad_size", FnSize),
        status: sym!("umad_status", FnStatus),
        get_mad_addr: sym!("umad_get_mad_addr", FnGetMadAddr),
        set_addr: sym!("umad_set_addr", FnSetAddr),
        set_pkey: sym!("umad_set_pkey", FnSetPkey),
        send: sym!("umad_send", FnSend),
        recv: sym!("umad_recv", FnRecv),
        register: sym!("umad_register", FnRegister),
        unregister: sym!("umad_unregister", FnUnregister),
        _lib: lib,
    };
    // SAFETY: umad_init takes no arguments and only reads the ABI version from sysfs.
    if unsafe { init() } < 0 {
        return Err(UmadError::Init);
    }
    Ok(umad)
}

/// What sysfs (or umad2sim's fake sysfs) says about one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortAttrs {
    pub ca: String,
    pub port: u8,
    pub base_lid: u16,
    pub sm_lid: u16,
    /// 1 Down, 2 Init, 3 Armed, 4 Active.
    pub state: u8,
    /// Host order.
    pub port_guid: u64,
}

/// What sysfs says about one CA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaAttrs {
    pub name: String,
    /// 1 CA, 2 switch, 3 router.
    pub node_type: u8,
    pub node_guid: u64,
    pub ports: Vec<PortAttrs>,
}

fn c_name(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Umad {
    /// Names of the CAs libibumad sees.
    pub fn ca_names(&self) -> Result<Vec<String>, UmadError> {
        let mut names = [[0 as c_char; CA_NAME_LEN]; MAX_CAS];
        // SAFETY: `names` is MAX_CAS arrays of UMAD_CA_NAME_LEN chars, as the C prototype
        // `char cas[][UMAD_CA_NAME_LEN], int max` expects; libibumad writes at most `max`.
        let n = unsafe { (self.get_cas_names)(names.as_mut_ptr(), MAX_CAS as c_int) };
        if n < 0 {
            return Err(UmadError::NoCa);
        }
        Ok(names
            .iter()
            .take(n.clamp(0, MAX_CAS as c_int) as usize)
            .map(|n| c_name(n))
            .collect())
    }

    /// One CA with the attributes of each of its ports.
    pub fn ca(&self, name: &str) -> Result<CaAttrs, UmadError> {
        let cname = CString::new(name).map_err(|_| UmadError::Invalid(name.to_string()))?;
        // SAFETY: RawCa is plain old data (ints, char arrays, null pointers): all-zero is valid.
        let mut raw: RawCa = unsafe { std::mem::zeroed() };
        // SAFETY: `cname` is a NUL-terminated string and `raw` a writable umad_ca_t.
        if unsafe { (self.get_ca)(cname.as_ptr(), &mut raw) } < 0 {
            let available = self.ca_names().unwrap_or_default();
            if available.iter().any(|n| n == name) {
                return Err(UmadError::CaUnreadable(name.to_string()));
            }
            return Err(UmadError::CaNotFound {
                name: name.to_string(),
                available: available.join(", "),
            });
        }
        let numports = raw.numports.clamp(0, CA_MAX_PORTS as c_int - 1) as u8;
        let attrs = CaAttrs {
            name: c_name(&raw.ca_name),
            node_type: raw.node_type as u8,
            node_guid: u64::from_be(raw.node_guid),
            ports: Vec::new(),
        };
        // SAFETY: `raw` was filled by umad_get_ca above and is released exactly once.
        unsafe { (self.release_ca)(&mut raw) };
        let mut attrs = attrs;
        // Switches expose port 0 only; CAs ports 1..=numports.
        let candidates = if attrs.node_type == 2 {
            0..=0
        } else {
            1..=numports.max(1)
        };
        for p in candidates {
            if let Some(pa) = self.port(&cname, name, p) {
                attrs.ports.push(pa);
            }
        }
        Ok(attrs)
    }

    fn port(&self, cname: &CStr, name: &str, port: u8) -> Option<PortAttrs> {
        // SAFETY: RawPort is plain old data: all-zero (null pkeys pointer) is valid.
        let mut raw: RawPort = unsafe { std::mem::zeroed() };
        // SAFETY: NUL-terminated name and a writable umad_port_t.
        if unsafe { (self.get_port)(cname.as_ptr(), c_int::from(port), &mut raw) } < 0 {
            return None;
        }
        let attrs = PortAttrs {
            ca: name.to_string(),
            port,
            base_lid: raw.base_lid as u16,
            sm_lid: raw.sm_lid as u16,
            state: raw.state as u8,
            port_guid: u64::from_be(raw.port_guid),
        };
        // SAFETY: `raw` was filled by umad_get_port and is released exactly once (frees pkeys).
        unsafe { (self.release_port)(&mut raw) };
        Some(attrs)
    }

    /// Resolves `umad[:CA[:PORT]]` to a port: the first active port when not given.
    pub fn resolve(&self, ca: Option<&str>, port: Option<u8>) -> Result<PortAttrs, UmadError> {
        let names = match ca {
            Some(c) => vec![c.to_string()],
            None => self.ca_names()?,
        };
        if names.is_empty() {
            return Err(UmadError::NoCa);
        }
        let mut first_ca = None;
        // Without an SM no port is Active, but one whose link trained
        // (Init, Armed) reaches the fabric by directed route: the agent
        // then reports what it finds, NO_MASTER_SM first.
        let mut linked = None;
        for n in &names {
            let attrs = self.ca(n)?;
            if let Some(p) = port {
                return attrs
                    .ports
                    .iter()
                    .find(|a| a.port == p)
                    .cloned()
                    .ok_or_else(|| UmadError::PortNotFound {
                        ca: n.clone(),
                        port: p,
                        ports: attrs
                            .ports
                            .iter()
                            .map(|a| a.port.to_string())
                            .collect::<Vec<_>>()
                            .join(","),
                    });
            }
            if let Some(a) = attrs.ports.iter().find(|a| a.state == 4) {
                return Ok(a.clone());
            }
            if linked.is_none() {
                linked = attrs
                    .ports
                    .iter()
                    .find(|a| matches!(a.state, 2 | 3))
                    .cloned();
            }
            first_ca.get_or_insert(n.clone());
        }
        if let Some(a) = linked {
            tracing::warn!(
                ca = %a.ca,
                port = a.port,
                "no active port (no subnet manager?): using a port whose link is up"
            );
            return Ok(a);
        }
        Err(UmadError::NoActivePort(first_ca.unwrap_or_default()))
    }

    /// Opens a port for MADs.
    pub fn open(&'static self, ca: &str, port: u8) -> Result<Port, UmadError> {
        let cname = CString::new(ca).map_err(|_| UmadError::Invalid(ca.to_string()))?;
        // SAFETY: NUL-terminated CA name; the returned id is owned by `Port` and closed on drop.
        let id = unsafe { (self.open_port)(cname.as_ptr(), c_int::from(port)) };
        if id < 0 {
            return Err(UmadError::OpenPort {
                ca: ca.to_string(),
                port,
                code: id,
            });
        }
        // SAFETY: umad_size takes no arguments and returns sizeof(struct ib_user_mad).
        let hdr = unsafe { (self.size)() };
        Ok(Port {
            umad: self,
            id,
            agents: Vec::new(),
            hdr,
            send_buf: vec![0u64; (hdr + 256).div_ceil(8)],
            recv_buf: vec![0u64; (hdr + 256).div_ceil(8)],
        })
    }
}

/// Where a MAD goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Address {
    /// Destination LID (0xFFFF permissive for directed-route SMPs).
    pub dlid: u16,
    /// Destination QP: 0 for SMPs, 1 for GSI (SA, PerfMgt).
    pub qp: u32,
    pub qkey: u32,
    pub sl: u8,
    pub pkey_index: u16,
}

impl Address {
    /// GSI QKey.
    pub const GSI_QKEY: u32 = 0x8001_0000;

    /// Directed-route SMPs: permissive LID, QP0.
    pub fn directed_route() -> Self {
        Address {
            dlid: 0xffff,
            qp: 0,
            qkey: 0,
            sl: 0,
            pkey_index: 0,
        }
    }

    /// A LID-routed SMP to the port at `lid`: QP0.
    pub fn smp(lid: u16) -> Self {
        Address {
            dlid: lid,
            qp: 0,
            qkey: 0,
            sl: 0,
            pkey_index: 0,
        }
    }

    /// A GSI class agent (SA, PMA) at `lid`.
    pub fn gsi(lid: u16) -> Self {
        Address {
            dlid: lid,
            qp: 1,
            qkey: Self::GSI_QKEY,
            sl: 0,
            pkey_index: 0,
        }
    }
}

/// A received MAD (or a send that failed: `status` != 0 and `mad` is our request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub agent: i32,
    /// 0 OK, else an errno (110 ETIMEDOUT: no answer).
    pub status: i32,
    /// Source LID (host order).
    pub slid: u16,
    pub mad: Vec<u8>,
}

/// An open umad port with its registered agents; closed on drop.
pub struct Port {
    umad: &'static Umad,
    id: c_int,
    agents: Vec<c_int>,
    hdr: usize,
    // u64 storage keeps the ib_user_mad header 8-byte aligned.
    send_buf: Vec<u64>,
    recv_buf: Vec<u64>,
}

impl Port {
    /// Registers an agent for a management class; `rmpp_version` 1 lets the kernel
    /// reassemble multi-packet (RMPP) answers (SA), 0 otherwise. `methods` lists the
    /// request methods this agent also receives unsolicited (e.g. Report, 0x06); empty
    /// for a client that only receives answers to its own requests.
    pub fn register(
        &mut self,
        class: u8,
        version: u8,
        rmpp_version: u8,
        methods: &[u8],
    ) -> Result<i32, UmadError> {
        // The C prototype takes `long method_mask[16 / sizeof(long)]`: 128 bits.
        const WORDS: usize = 16 / std::mem::size_of::<c_long>();
        const BITS: usize = 8 * std::mem::size_of::<c_long>();
        let mut mask = [0 as c_long; WORDS];
        for &m in methods.iter().filter(|&&m| m < 128) {
            if let Some(w) = mask.get_mut(usize::from(m) / BITS) {
                *w |= 1 << (usize::from(m) % BITS);
            }
        }
        let mask_ptr = if methods.is_empty() {
            std::ptr::null_mut()
        } else {
            mask.as_mut_ptr()
        };
        // SAFETY: the mask is null (client agent) or points to 128 bits, as the C
        // prototype requires; libibumad only reads it during the call.
        let id = unsafe {
            (self.umad.register)(
                self.id,
                c_int::from(class),
                c_int::from(version),
                rmpp_version,
                mask_ptr,
            )
        };
        if id < 0 {
            return Err(UmadError::Register { class, code: id });
        }
        self.agents.push(id);
        Ok(id)
    }

    /// Sends one MAD (`mad` up to 256 bytes) through `agent`. `timeout_ms` > 0 makes the
    /// kernel match the answer to this request (it drops answers to untracked sends).
    pub fn send(
        &mut self,
        agent: i32,
        mad: &[u8],
        addr: Address,
        timeout_ms: u32,
        retries: u32,
    ) -> Result<(), UmadError> {
        let need = (self.hdr + mad.len()).div_ceil(8);
        if self.send_buf.len() < need {
            self.send_buf.resize(need, 0);
        }
        self.send_buf.iter_mut().for_each(|w| *w = 0);
        let buf = self.send_buf.as_mut_ptr().cast::<c_void>();
        // SAFETY: `buf` holds hdr + mad.len() zeroed bytes, 8-byte aligned; umad_get_mad
        // returns buf + hdr, so the copy of mad.len() bytes stays inside the buffer.
        unsafe {
            let data = (self.umad.get_mad)(buf).cast::<u8>();
            std::ptr::copy_nonoverlapping(mad.as_ptr(), data, mad.len());
            (self.umad.set_addr)(
                buf,
                c_int::from(addr.dlid),
                addr.qp as c_int,
                c_int::from(addr.sl),
                addr.qkey as c_int,
            );
            (self.umad.set_pkey)(buf, c_int::from(addr.pkey_index));
        }
        // SAFETY: `buf` is a complete ib_user_mad with `mad.len()` data bytes; the port and
        // agent ids come from umad_open_port / umad_register on this port.
        let rc = unsafe {
            (self.umad.send)(
                self.id,
                agent,
                buf,
                mad.len() as c_int,
                timeout_ms.min(i32::MAX as u32) as c_int,
                retries.min(i32::MAX as u32) as c_int,
            )
        };
        if rc < 0 {
            return Err(UmadError::Send(rc));
        }
        Ok(())
    }

    /// Waits up to `timeout_ms` (0: poll, -1: forever) for one MAD; `None` on timeout.
    pub fn recv(&mut self, timeout_ms: i32) -> Result<Option<Received>, UmadError> {
        loop {
            let cap = self.recv_buf.len() * 8 - self.hdr;
            let mut len = cap as c_int;
            let buf = self.recv_buf.as_mut_ptr().cast::<c_void>();
            // SAFETY: `buf` has hdr + cap writable, aligned bytes and `len` says cap.
            let rc = unsafe { (self.umad.recv)(self.id, buf, &mut len, timeout_ms) };
            if rc == -ETIMEDOUT {
                return Ok(None);
            }
            if rc == -ENOSPC && len as usize > cap {
                // An RMPP-reassembled answer larger than our buffer stays queued: grow, retry.
                self.recv_buf
                    .resize((self.hdr + len as usize).div_ceil(8), 0);
                continue;
            }
            if rc < 0 {
                return Err(UmadError::Recv(rc));
            }
            let n = (len.max(0) as usize).min(cap);
            // SAFETY: after a successful umad_recv, buf holds the header and `n` <= cap
            // data bytes at umad_get_mad(buf); umad_get_mad_addr points into the header.
            let (status, slid, mad) = unsafe {
                let status = (self.umad.status)(buf);
                let addr = (self.umad.get_mad_addr)(buf);
                let slid = if addr.is_null() {
                    0
                } else {
                    u16::from_be((*addr).lid)
                };
                let data = (self.umad.get_mad)(buf).cast::<u8>();
                (status, slid, std::slice::from_raw_parts(data, n).to_vec())
            };
            return Ok(Some(Received {
                agent: rc,
                status,
                slid,
                mad,
            }));
        }
    }
}

impl Drop for Port {
    fn drop(&mut self) {
        for &a in &self.agents {
            // SAFETY: `a` was registered on this open port and is unregistered once.
            unsafe { (self.umad.unregister)(self.id, a) };
        }
        // SAFETY: `id` came from umad_open_port and is closed exactly once.
        unsafe { (self.umad.close_port)(self.id) };
    }
}
