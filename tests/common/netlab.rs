//! A network test lab on one machine (issue 29): a server host and N client
//! hosts made of network namespaces, joined by a bridge in the server's
//! namespace, each client's link shaped with `tbf` both ways; GlusterFS,
//! sshfs and Samba + smbnetfs served from the server and mounted per client;
//! Open MPI launched across the client hosts without sshd.
//!
//! Facts this relies on (docs/reference labs.md): a mount made inside
//! `ip netns exec` lands in a private mount namespace and is lost, so client
//! mounts are made with `nsenter --net=` (the mount is seen by everyone, its
//! traffic crosses the client's link); daemons keep their state apart by
//! bind mounts in their own mount namespace (what `ip netns exec` gives
//! them); this kernel has tbf but no netem.
//!
//! Everything a lab makes is named after it (`fsbnl-PID-N`): its namespaces
//! (`NAME-srv`, `NAME-c0`, ...), its directory (`/tmp/NAME`, a tmpfs: keys,
//! configurations, daemons' state, the brick and exports, logs, mount
//! points) and its subnet's claim. A lab is torn down on drop, also when the test panics; a lab whose
//! process was killed is torn down by the next `NetLab::new`.

use std::net::Ipv4Addr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// What every lab's names start with. Not `fsbench-`: `fsbench clean /tmp`
/// must never see a lab.
const PREFIX: &str = "fsbnl-";

/// Where labs keep their directories and subnet claims: one fixed place,
/// so that every test process sees every other's claims (not `$TMPDIR`).
const ROOT: &str = "/tmp";

/// The lab's directory is a tmpfs of its own: its teardown is an unmount
/// (removing a GlusterFS brick's files from this machine's disk took up to
/// 3 s), and nothing of a lab is left on the disk.
const LAB_TMPFS: &str = "size=2g,mode=700";

/// Where `ip netns add` names namespaces.
const NETNS_DIR: &str = "/run/netns";

/// Labs use 10.SECOND_OCTET.K.0/24, K claimed per lab.
const SECOND_OCTET: u8 = 213;

/// A client link's rate when the spec does not say: 1 GbE.
pub const DEFAULT_MBIT: u32 = 1000;

/// tbf's bucket and queue: a 256 KiB burst keeps GSO frames whole (64 KiB
/// split them: 838 Mbit/s and thousands of retransmits at 1 GbE).
const TBF: [&str; 4] = ["burst", "256kb", "latency", "5ms"];

/// How long a daemon may take to start or a mount to appear (generous: the
/// suite runs tests in parallel on 2 cores).
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long killed processes get to exit after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(3);

/// The lab's shape: how many client hosts and each one's link rate.
#[derive(Clone, Debug)]
pub struct LabSpec {
    rates_mbit: Vec<u32>,
}

impl LabSpec {
    /// `n` clients, every link at [`DEFAULT_MBIT`].
    pub fn clients(n: usize) -> LabSpec {
        assert!((1..=200).contains(&n), "a lab has 1 to 200 clients");
        LabSpec {
            rates_mbit: vec![DEFAULT_MBIT; n],
        }
    }

    /// Client `client`'s link shaped to `mbit` both ways (a straggler).
    pub fn rate(mut self, client: usize, mbit: u32) -> LabSpec {
        self.rates_mbit[client] = mbit;
        self
    }
}

impl Default for LabSpec {
    fn default() -> LabSpec {
        LabSpec::clients(2)
    }
}

/// A host of the lab. Clients are numbered from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    Server,
    Client(usize),
}

/// The network file systems the lab serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fs {
    Gluster,
    Sshfs,
    Smb,
}

impl Fs {
    pub const ALL: [Fs; 3] = [Fs::Gluster, Fs::Sshfs, Fs::Smb];

    /// Its name in messages, timings and mount point names.
    pub fn name(self) -> &'static str {
        match self {
            Fs::Gluster => "glusterfs",
            Fs::Sshfs => "sshfs",
            Fs::Smb => "smbnetfs",
        }
    }

    /// The type the mount table gives a client's mount.
    pub fn mount_type(self) -> &'static str {
        match self {
            Fs::Gluster => "fuse.glusterfs",
            Fs::Sshfs => "fuse.sshfs",
            Fs::Smb => "fuse.smbnetfs",
        }
    }

    /// The programs serving and mounting it.
    fn tools(self) -> &'static [&'static str] {
        match self {
            Fs::Gluster => &["glusterd", "gluster", "glusterfs", "mount.glusterfs"],
            Fs::Sshfs => &["sshd", "ssh", "ssh-keygen", "sshfs"],
            Fs::Smb => &["smbd", "smbnetfs"],
        }
    }
}

/// Programs every lab needs.
const NETWORK_TOOLS: [&str; 6] = ["ip", "tc", "nsenter", "unshare", "mount", "umount"];

/// Programs the MPI launch needs.
pub const MPI_TOOLS: [&str; 2] = ["mpirun", "hostname"];

/// A file system served by the server and mounted on every client.
#[derive(Clone, Debug)]
pub struct Share {
    pub fs: Fs,
    /// Per client, the directory where the shared files are (for smbnetfs
    /// the share inside the mount: `MOUNT/SERVER/share`).
    pub clients: Vec<PathBuf>,
    /// Per client, its FUSE mount point.
    pub mounts: Vec<PathBuf>,
}

/// Bytes through a client's link, from its namespace's /proc/net/dev.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub rx_bytes: u64,
    pub tx_bytes: u64,
}

/// One running lab; torn down on drop.
pub struct NetLab {
    name: String,
    subnet: u8,
    dir: PathBuf,
    rates_mbit: Vec<u32>,
    /// The daemons started here (reaped at teardown).
    daemons: Vec<Child>,
    /// glusterd's pid, once started: the gluster CLI runs in its namespaces.
    glusterd: Option<u32>,
    shared_paths: usize,
    timings: Vec<(String, Duration)>,
    torn_down: bool,
}

/// Whether this process can build a lab serving `fs` (and launching MPI when
/// `mpi`); says why not on stderr, as the tests that skip do.
pub fn available(fs: &[Fs], mpi: bool) -> bool {
    if !super::is_root() {
        eprintln!("skipping: not root");
        return false;
    }
    let mpi_tools: &[&str] = if mpi { &MPI_TOOLS } else { &[] };
    let needed = NETWORK_TOOLS
        .iter()
        .chain(fs.iter().flat_map(|f| f.tools()))
        .chain(mpi_tools);
    let missing: Vec<&str> = needed.filter(|t| find_tool(t).is_none()).copied().collect();
    if !missing.is_empty() {
        eprintln!(
            "skipping: {} not installed (scripts/test.sh installs them)",
            missing.join(", ")
        );
        return false;
    }
    true
}

/// An executable named `name` in the system's directories or $PATH.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .map(PathBuf::from)
        .to_vec();
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

impl NetLab {
    /// Builds the hosts and links of `spec` after tearing down the labs of
    /// killed processes. Panics when a step fails: call [`available`] first.
    pub fn new(spec: LabSpec) -> NetLab {
        remove_stale_labs();
        let started = Instant::now();
        let name = next_name();
        // The lab exists before anything is made: a step that fails is
        // undone by its drop.
        let mut lab = NetLab {
            subnet: claim_subnet(&name),
            dir: Path::new(ROOT).join(&name),
            name,
            rates_mbit: spec.rates_mbit,
            daemons: Vec::new(),
            glusterd: None,
            shared_paths: 0,
            timings: Vec::new(),
            torn_down: false,
        };
        lab.make_dir();
        lab.build_network();
        lab.timings.push(("network".into(), started.elapsed()));
        lab
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The lab's directory: its state, logs and mount points.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn clients(&self) -> usize {
        self.rates_mbit.len()
    }

    /// The client hosts, in order.
    pub fn client_hosts(&self) -> impl Iterator<Item = Host> + use<> {
        (0..self.clients()).map(Host::Client)
    }

    /// The host's network namespace, which is also its host name under MPI.
    pub fn namespace(&self, host: Host) -> String {
        match host {
            Host::Server => format!("{}-srv", self.name),
            Host::Client(i) => format!("{}-c{i}", self.name),
        }
    }

    pub fn address(&self, host: Host) -> Ipv4Addr {
        let last = match host {
            Host::Server => 1,
            Host::Client(i) => 2 + i as u8,
        };
        Ipv4Addr::new(10, SECOND_OCTET, self.subnet, last)
    }

    /// The lab's subnet, `10.213.K.0/24`.
    pub fn subnet(&self) -> String {
        format!("10.{SECOND_OCTET}.{}.0/24", self.subnet)
    }

    /// `program` to be run in `host`'s network namespace (`ip netns exec`:
    /// with a private mount namespace of its own).
    pub fn command_in(&self, host: Host, program: &str) -> Command {
        let mut command = own_group("ip");
        command
            .args(["netns", "exec", &self.namespace(host), program])
            .stdin(Stdio::null());
        command
    }

    /// Runs `args` in `host`'s network namespace to completion.
    pub fn run_in(&self, host: Host, args: &[&str]) -> Output {
        let (program, rest) = args.split_first().expect("a command");
        self.command_in(host, program)
            .args(rest)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {args:?} in {host:?}: {e}"))
    }

    /// Bytes through client `client`'s link so far.
    pub fn client_counters(&self, client: usize) -> Counters {
        let out = self.run_in(Host::Client(client), &["cat", "/proc/net/dev"]);
        let text = String::from_utf8_lossy(&out.stdout);
        parse_net_dev(&text, "eth0")
            .unwrap_or_else(|| panic!("no eth0 in client {client}'s /proc/net/dev:\n{text}"))
    }

    /// How long each step took: the network, then each service started.
    pub fn timings(&self) -> &[(String, Duration)] {
        &self.timings
    }

    /// What to look for after the lab is gone (see [`Trace::leftovers`]).
    pub fn trace(&self) -> Trace {
        Trace {
            name: self.name.clone(),
            dir: self.dir.clone(),
            namespaces: self.namespaces().map(|ns| ns_inode(&ns)).collect(),
        }
    }

    /// Tears the lab down now; returns how long that took.
    pub fn close(mut self) -> Duration {
        self.teardown().unwrap_or_default()
    }

    fn namespaces(&self) -> impl Iterator<Item = String> + '_ {
        std::iter::once(Host::Server)
            .chain(self.client_hosts())
            .map(|h| self.namespace(h))
    }

    /// Tears the lab down unless done already; how long it took.
    fn teardown(&mut self) -> Option<Duration> {
        if std::mem::replace(&mut self.torn_down, true) {
            return None;
        }
        let started = Instant::now();
        tear_down(&self.name);
        for daemon in &mut self.daemons {
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
        Some(started.elapsed())
    }
}

impl Drop for NetLab {
    fn drop(&mut self) {
        if let Some(took) = self.teardown() {
            eprintln!("netlab {}: teardown {took:.2?}", self.name);
        }
    }
}

// ---------------------------------------------------------------------------
// Names, subnets and stale labs.

/// `fsbnl-PID-N`: unique per process and lab, and tells which process owns it.
fn next_name() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{PREFIX}{}-{n}", std::process::id())
}

/// The owning process of a lab name (`fsbnl-PID-N...`), if it is one.
fn owner(name: &str) -> Option<i32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

fn is_alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The claim of subnet K: a symbolic link `/tmp/fsbnl-net-K` to the lab's
/// name, made atomically, so two labs never share a subnet.
fn subnet_claim(k: u8) -> PathBuf {
    Path::new(ROOT).join(format!("{PREFIX}net-{k}"))
}

/// Claims a free subnet for lab `name`, starting from one spread by its pid.
fn claim_subnet(name: &str) -> u8 {
    let start = std::process::id() as usize;
    (0..256)
        .map(|i| ((start + i) % 256) as u8)
        .find(|&k| std::os::unix::fs::symlink(name, subnet_claim(k)).is_ok())
        .expect("every lab subnet is claimed")
}

/// Every lab name with a trace on this machine: namespaces, directories
/// and subnet claims.
fn lab_names() -> Vec<String> {
    let mut names: Vec<String> = entries(Path::new(NETNS_DIR))
        .into_iter()
        .filter_map(|ns| ns.rsplit_once('-').map(|(lab, _)| lab.to_string()))
        .chain(entries(Path::new(ROOT)))
        .chain(subnet_claims().into_iter().map(|(_, lab)| lab))
        .filter(|name| owner(name).is_some())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// (claim path, lab name) of every subnet claim.
fn subnet_claims() -> Vec<(PathBuf, String)> {
    entries(Path::new(ROOT))
        .into_iter()
        .filter(|e| e.starts_with(&format!("{PREFIX}net-")))
        .filter_map(|e| {
            let claim = Path::new(ROOT).join(e);
            let lab = std::fs::read_link(&claim).ok()?;
            Some((claim, lab.to_string_lossy().into_owned()))
        })
        .collect()
}

/// Names in `dir` starting with [`PREFIX`].
fn entries(dir: &Path) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    read.filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(PREFIX))
        .collect()
}

/// Tears down every lab whose owning process is gone (a killed test run).
pub fn remove_stale_labs() {
    for name in lab_names() {
        if owner(&name).is_some_and(|pid| !is_alive(pid)) {
            eprintln!("netlab: removing {name}, left by a killed run");
            tear_down(&name);
        }
    }
}

// ---------------------------------------------------------------------------
// Teardown, by name alone, so a killed run's lab goes the same way.

/// Unmounts, kills, deletes and removes everything of lab `name`.
fn tear_down(name: &str) {
    let dir = Path::new(ROOT).join(name);
    let namespaces = namespaces_of(name);
    // FUSE mounts first, while their daemons still answer.
    let stuck = unmount_under(&dir, false);
    kill_all(&namespaces, &dir);
    if !stuck.is_empty() {
        unmount_under(&dir, true);
    }
    for ns in &namespaces {
        quiet(Command::new("ip").args(["netns", "delete", ns]));
    }
    for (claim, lab) in subnet_claims() {
        if lab == name {
            let _ = std::fs::remove_file(claim);
        }
    }
    remove_dir(&dir);
}

/// The namespaces of lab `name` still in /run/netns.
fn namespaces_of(name: &str) -> Vec<String> {
    entries(Path::new(NETNS_DIR))
        .into_iter()
        .filter(|ns| ns.rsplit_once('-').is_some_and(|(lab, _)| lab == name))
        .collect()
}

/// Mount points at or under `dir` in this mount namespace, deepest first.
fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut points: Vec<PathBuf> = text
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(unescape_mount_point)
        .filter(|p| p.starts_with(dir))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    points.dedup();
    points
}

/// mountinfo writes space, tab, newline and backslash as octal escapes.
fn unescape_mount_point(field: &str) -> PathBuf {
    let mut out = String::new();
    let mut rest = field;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest
            .get(at + 1..at + 4)
            .and_then(|o| u8::from_str_radix(o, 8).ok());
        match code {
            Some(byte) => {
                out.push(byte as char);
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    PathBuf::from(out)
}

/// Unmounts every mount under `dir` (lazily when `lazy`); the ones left.
fn unmount_under(dir: &Path, lazy: bool) -> Vec<PathBuf> {
    for point in mounts_under(dir) {
        let mut umount = Command::new("umount");
        if lazy {
            umount.arg("-l");
        }
        quiet(umount.arg(&point));
    }
    mounts_under(dir)
}

/// Kills every process in the lab's namespaces, and every one whose command
/// line names the lab's directory (a FUSE daemon whose namespace is gone):
/// SIGTERM, then SIGKILL to those still there after [`TERM_GRACE`].
fn kill_all(namespaces: &[String], dir: &Path) {
    let inodes: Vec<u64> = namespaces.iter().map(|ns| ns_inode(ns)).collect();
    let find = || processes_of(&inodes, dir);
    for pid in find() {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    let deadline = Instant::now() + TERM_GRACE;
    while !find().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in find() {
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let deadline = Instant::now() + TERM_GRACE;
    while !find().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The inode of a named network namespace (0 when it is gone): a process
/// is in it when its /proc/PID/ns/net has that inode.
fn ns_inode(ns: &str) -> u64 {
    std::fs::metadata(Path::new(NETNS_DIR).join(ns)).map_or(0, |m| m.ino())
}

/// Live processes in one of the namespaces `inodes` or whose command line
/// names `dir` (zombies have neither and are left to their parents).
fn processes_of(inodes: &[u64], dir: &Path) -> Vec<i32> {
    let needle = dir.to_string_lossy().into_owned();
    let me = std::process::id() as i32;
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|&pid| {
            let in_ns = std::fs::metadata(format!("/proc/{pid}/ns/net"))
                .is_ok_and(|m| inodes.contains(&m.ino()));
            in_ns || cmdline(pid).contains(&needle)
        })
        .collect()
}

fn cmdline(pid: i32) -> String {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&bytes).replace('\0', " ")
}

/// Removes the lab's directory, never across a mount: one still there
/// (a FUSE daemon that would not die) keeps the directory, said on stderr.
fn remove_dir(dir: &Path) {
    let left = mounts_under(dir);
    if !left.is_empty() {
        eprintln!("netlab: {} still mounted: {left:?}", dir.display());
        return;
    }
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            eprintln!("netlab: cannot remove {}: {e}", dir.display());
        }
        _ => {}
    }
}

/// Runs a teardown step whose failure the next step covers.
fn quiet(command: &mut Command) {
    let _ = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// What a lab left on the machine, looked for after its teardown.
pub struct Trace {
    name: String,
    dir: PathBuf,
    namespaces: Vec<u64>,
}

impl Trace {
    /// Every namespace, mount, process, directory and subnet claim of the
    /// lab still there; empty after a complete teardown.
    pub fn leftovers(&self) -> Vec<String> {
        let namespaces = namespaces_of(&self.name)
            .into_iter()
            .map(|ns| format!("namespace {ns}"));
        let mounts = mounts_under(&self.dir)
            .into_iter()
            .map(|m| format!("mount {}", m.display()));
        let processes = processes_of(&self.namespaces, &self.dir)
            .into_iter()
            .map(|pid| format!("process {pid}: {}", cmdline(pid)));
        let dir = self
            .dir
            .exists()
            .then(|| format!("directory {}", self.dir.display()));
        let claims = subnet_claims()
            .into_iter()
            .filter(|(_, lab)| *lab == self.name)
            .map(|(claim, _)| format!("subnet claim {}", claim.display()));
        namespaces
            .chain(mounts)
            .chain(processes)
            .chain(dir)
            .chain(claims)
            .collect()
    }
}

// ---------------------------------------------------------------------------
// Hosts and links.

impl NetLab {
    /// The lab's directory, a tmpfs of its own.
    fn make_dir(&self) {
        std::fs::create_dir(&self.dir).expect("cannot create the lab's directory");
        let mut mount = Command::new("mount");
        mount.args(["-t", "tmpfs", "-o", LAB_TMPFS, "netlab"]);
        must(mount.arg(&self.dir));
    }

    /// The server's bridge and, per client, a veth pair from the bridge to
    /// the client's `eth0`, shaped at both ends.
    fn build_network(&self) {
        let server = self.namespace(Host::Server);
        for ns in self.namespaces() {
            self.ip(&["netns", "add", &ns]);
            self.ip(&["-n", &ns, "link", "set", "lo", "up"]);
        }
        let address = format!("{}/24", self.address(Host::Server));
        self.ip(&["-n", &server, "link", "add", "br0", "type", "bridge"]);
        self.ip(&["-n", &server, "addr", "add", &address, "dev", "br0"]);
        self.ip(&["-n", &server, "link", "set", "br0", "up"]);
        for client in 0..self.clients() {
            self.link_client(client);
        }
    }

    /// Client `client`'s veth pair: `vI` on the server's bridge, `eth0` in
    /// the client, each end's egress shaped to the client's rate.
    fn link_client(&self, client: usize) {
        let server = self.namespace(Host::Server);
        let ns = self.namespace(Host::Client(client));
        let port = format!("v{client}");
        let address = format!("{}/24", self.address(Host::Client(client)));
        // Made in the server with its peer placed in the client at once, so
        // the names only need to be unique within each namespace.
        self.ip(&[
            "-n", &server, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns",
            &ns,
        ]);
        self.ip(&["-n", &server, "link", "set", &port, "master", "br0", "up"]);
        self.ip(&["-n", &ns, "addr", "add", &address, "dev", "eth0"]);
        self.ip(&["-n", &ns, "link", "set", "eth0", "up"]);
        let rate = format!("{}mbit", self.rates_mbit[client]);
        self.shape(&server, &port, &rate);
        self.shape(&ns, "eth0", &rate);
    }

    /// `tc qdisc add ... tbf rate RATE burst 256kb latency 5ms` on a
    /// device's egress.
    fn shape(&self, ns: &str, device: &str, rate: &str) {
        let mut tc = Command::new("tc");
        tc.args(["-n", ns, "qdisc", "add", "dev", device, "root", "tbf"])
            .args(["rate", rate])
            .args(TBF);
        must(&mut tc);
    }

    fn ip(&self, args: &[&str]) {
        must(Command::new("ip").args(args));
    }
}

/// `program` in a process group of its own: what it leaves running must not
/// share the test's group, for smbd (run with `--no-process-group`, to stay
/// in the foreground) signals its whole group when it stops, which killed
/// the test itself.
fn own_group(program: &str) -> Command {
    let mut command = Command::new(program);
    command.process_group(0);
    command
}

/// Runs a setup step; panics with its output when it fails.
fn must(command: &mut Command) -> Output {
    let out = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// (rx, tx) bytes of `device` in a /proc/net/dev text.
fn parse_net_dev(text: &str, device: &str) -> Option<Counters> {
    text.lines().find_map(|line| {
        let (name, fields) = line.split_once(':')?;
        if name.trim() != device {
            return None;
        }
        let numbers: Vec<u64> = fields
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        // Receive: bytes packets errs drop fifo frame compressed multicast;
        // then transmit's bytes.
        Some(Counters {
            rx_bytes: *numbers.first()?,
            tx_bytes: *numbers.get(8)?,
        })
    })
}

// ---------------------------------------------------------------------------
// Services: daemons in the server, FUSE clients per client.

/// Run by `sh` in the server's namespace before a daemon: a private /run
/// (its sockets and pid files apart from the machine's and other labs'),
/// then `SOURCE TARGET` pairs bound until `--`, then the daemon itself.
const DAEMON_PRELUDE: &str = r#"mount -t tmpfs -o mode=755 netlab-run /run &&
mkdir /run/sshd /run/gluster /run/samba || exit 1
while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 1; shift 2; done
shift
exec "$@""#;

impl NetLab {
    /// Serves `fs` from the server and mounts it on every client; the time
    /// it took is in [`NetLab::timings`].
    pub fn start(&mut self, fs: Fs) -> Share {
        let started = Instant::now();
        let share = match fs {
            Fs::Gluster => self.start_gluster(),
            Fs::Sshfs => self.start_sshfs(),
            Fs::Smb => self.start_smb(),
        };
        self.timings.push((fs.name().into(), started.elapsed()));
        share
    }

    /// A directory of the lab (made with its parents).
    fn subdir(&self, path: &str) -> PathBuf {
        let dir = self.dir.join(path);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {dir:?}: {e}"));
        dir
    }

    /// The mount point of `fs` on client `client`.
    fn mount_point(&self, fs: Fs, client: usize) -> PathBuf {
        self.subdir(&format!("mnt/{}-c{client}", fs.name()))
    }

    /// Starts `argv` in the server's namespace with `binds` (private
    /// directories over system ones) in its own mount namespace; its output
    /// goes to `logs/WHAT.log`. Returns its pid.
    fn spawn_daemon(&mut self, what: &str, binds: &[(PathBuf, &str)], argv: &[&str]) -> u32 {
        let log = std::fs::File::create(self.subdir("logs").join(format!("{what}.log"))).unwrap();
        let mut command = self.command_in(Host::Server, "sh");
        command.args(["-c", DAEMON_PRELUDE, "sh"]);
        for (source, target) in binds {
            command.arg(source).arg(target);
        }
        command.arg("--").args(argv);
        let child = command
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let pid = child.id();
        self.daemons.push(child);
        pid
    }

    /// Mounts on every client: `mount(client, mount point)` is the command
    /// run with `nsenter --net` into that client's namespace.
    fn mount_clients(&self, fs: Fs, mount: impl Fn(usize, &Path) -> Vec<String>) -> Vec<PathBuf> {
        (0..self.clients())
            .map(|client| {
                let point = self.mount_point(fs, client);
                let net = format!("--net={NETNS_DIR}/{}", self.namespace(Host::Client(client)));
                must(own_group("nsenter").arg(net).args(mount(client, &point)));
                point
            })
            .collect()
    }

    /// Waits until the server listens on TCP `port` (read in the daemon
    /// `pid`'s network namespace); panics naming `what` with its log.
    fn wait_listening(&self, pid: u32, port: u16, what: &str) {
        let wanted = format!(":{port:04X} ");
        self.wait_for(what, || {
            let tcp = std::fs::read_to_string(format!("/proc/{pid}/net/tcp")).unwrap_or_default();
            // local_address rem_address st: LISTEN is 0A.
            tcp.lines()
                .any(|l| l.contains(&wanted) && l.split_whitespace().nth(3) == Some("0A"))
        });
    }

    /// Polls `ready` until it holds; panics after [`READY_TIMEOUT`] with the
    /// log of `what`.
    fn wait_for(&self, what: &str, mut ready: impl FnMut() -> bool) {
        let deadline = Instant::now() + READY_TIMEOUT;
        while !ready() {
            if Instant::now() > deadline {
                let log = self.dir.join("logs").join(format!("{what}.log"));
                let text = std::fs::read_to_string(log).unwrap_or_default();
                panic!("{what} not ready within {READY_TIMEOUT:?}; its log:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// glusterd with one brick volume, `fsbench`, in the server; the FUSE
    /// client on every client.
    fn start_gluster(&mut self) -> Share {
        let state = self.subdir("gluster/lib");
        let logs = self.subdir("gluster/log");
        let brick = self.subdir("gluster/brick");
        let log_file = logs.join("glusterd.log");
        let pid = self.spawn_daemon(
            "glusterd",
            &[
                (state, "/var/lib/glusterd"),
                (logs.clone(), "/var/log/glusterfs"),
            ],
            &[
                "glusterd",
                "-N",
                &format!("--log-file={}", log_file.display()),
            ],
        );
        self.glusterd = Some(pid);
        self.wait_for("glusterd", || {
            self.gluster_cli(&["pool", "list"]).status.success()
        });
        let brick = format!("{}:{}", self.address(Host::Server), brick.display());
        self.gluster(&["volume", "create", "fsbench", &brick, "force"]);
        self.gluster(&["volume", "start", "fsbench"]);
        let volume = format!("{}:/fsbench", self.address(Host::Server));
        let mounts = self.mount_clients(Fs::Gluster, |client, point| {
            let log = logs.join(format!("client-c{client}.log"));
            let options = format!("log-file={}", log.display());
            let point = point.display().to_string();
            vec!["mount", "-t", "glusterfs", "-o", &options, &volume, &point]
                .into_iter()
                .map(str::to_string)
                .collect()
        });
        Share {
            fs: Fs::Gluster,
            clients: mounts.clone(),
            mounts,
        }
    }

    /// The gluster CLI in glusterd's network and mount namespaces (its
    /// socket is in the daemon's private /run).
    fn gluster_cli(&self, args: &[&str]) -> Output {
        let pid = self.glusterd.expect("glusterd started").to_string();
        Command::new("nsenter")
            .args(["-t", &pid, "-m", "-n", "gluster", "--mode=script"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("cannot run gluster")
    }

    fn gluster(&self, args: &[&str]) {
        let out = self.gluster_cli(args);
        assert!(
            out.status.success(),
            "gluster {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// sshd in the server with a host key and one client key made here (no
    /// system configuration read or touched); sshfs on every client.
    fn start_sshfs(&mut self) -> Share {
        let ssh = self.subdir("ssh");
        let export = self.subdir("sshfs-export");
        for key in ["host_key", "client_key"] {
            must(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", ""])
                    .arg("-f")
                    .arg(ssh.join(key)),
            );
        }
        std::fs::copy(ssh.join("client_key.pub"), ssh.join("authorized_keys")).unwrap();
        let sshd_config = self.write_sshd_config(&ssh);
        let client_config = write_ssh_client_config(&ssh);
        let pid = self.spawn_daemon(
            "sshd",
            &[],
            // sshd re-executes itself for each connection: by full path.
            &[
                "/usr/sbin/sshd",
                "-D",
                "-e",
                "-f",
                &sshd_config.to_string_lossy(),
            ],
        );
        self.wait_listening(pid, 22, "sshd");
        let remote = format!("root@{}:{}", self.address(Host::Server), export.display());
        let mounts = self.mount_clients(Fs::Sshfs, |_, point| {
            let config = client_config.display().to_string();
            let point = point.display().to_string();
            vec!["sshfs", "-F", &config, &remote, &point]
                .into_iter()
                .map(str::to_string)
                .collect()
        });
        Share {
            fs: Fs::Sshfs,
            clients: mounts.clone(),
            mounts,
        }
    }

    fn write_sshd_config(&self, ssh: &Path) -> PathBuf {
        let path = ssh.join("sshd_config");
        let text = format!(
            "ListenAddress {address}\n\
             HostKey {dir}/host_key\n\
             AuthorizedKeysFile {dir}/authorized_keys\n\
             PermitRootLogin prohibit-password\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             UsePAM no\n\
             StrictModes no\n\
             PidFile none\n\
             Subsystem sftp internal-sftp\n",
            address = self.address(Host::Server),
            dir = ssh.display()
        );
        std::fs::write(&path, text).unwrap();
        path
    }

    /// smbd in the server with a configuration and state of its own (the
    /// system's dirs bound over by private ones too, for what the
    /// configuration does not name); smbnetfs on every client, with
    /// `big_writes` (without it FUSE writes 4 KiB at a time: 11 MB/s).
    fn start_smb(&mut self) -> Share {
        let smb = self.subdir("smb");
        self.subdir("smb/share");
        let config = self.write_smb_config(&smb);
        let binds = [
            (self.subdir("smb/lib"), "/var/lib/samba"),
            (self.subdir("smb/cache"), "/var/cache/samba"),
            (self.subdir("smb/log"), "/var/log/samba"),
        ];
        let pid = self.spawn_daemon(
            "smbd",
            &binds,
            &[
                "smbd",
                "--foreground",
                "--no-process-group",
                "--debug-stdout",
                "-s",
                &config.to_string_lossy(),
            ],
        );
        self.wait_listening(pid, 445, "smbd");
        let mounts = self.mount_clients(Fs::Smb, |client, point| {
            let home = self.smbnetfs_home(client);
            let options = format!(
                "config={}/.smb/smbnetfs.conf,big_writes,log_file={}/smbnetfs.log",
                home.display(),
                home.display()
            );
            let point = point.display().to_string();
            vec![
                "env",
                &format!("HOME={}", home.display()),
                "smbnetfs",
                &point,
                "-o",
                &options,
            ]
            .into_iter()
            .map(str::to_string)
            .collect()
        });
        self.smb_share(mounts, "share")
    }

    fn write_smb_config(&self, smb: &Path) -> PathBuf {
        let dir = smb.display();
        let mut text = format!(
            "[global]\n\
             workgroup = FSBLAB\n\
             server role = standalone server\n\
             interfaces = {address}/24\n\
             bind interfaces only = yes\n\
             smb ports = 445\n\
             disable netbios = yes\n\
             map to guest = Bad User\n\
             load printers = no\n\
             printcap name = /dev/null\n\
             disable spoolss = yes\n\
             log file = {dir}/log/log.%m\n",
            address = self.address(Host::Server)
        );
        for (option, sub) in [
            ("private dir", "private"),
            ("lock directory", "lock"),
            ("state directory", "state"),
            ("cache directory", "cache"),
            ("pid directory", "run"),
            ("ncalrpc dir", "ncalrpc"),
        ] {
            self.subdir(&format!("smb/{sub}"));
            text.push_str(&format!("{option} = {dir}/{sub}\n"));
        }
        text.push_str(&format!(
            "[share]\npath = {dir}/share\nread only = no\nguest ok = yes\nforce user = root\n"
        ));
        let path = smb.join("smb.conf");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Client `client`'s smbnetfs home: `.smb/smbnetfs.conf` (guest access,
    /// no browsing of the network; smbnetfs ignores its auth lines unless
    /// the file is private) and `.smb/smb.conf` for libsmbclient.
    fn smbnetfs_home(&self, client: usize) -> PathBuf {
        let home = self.subdir(&format!("smbnetfs-c{client}"));
        let dot = self.subdir(&format!("smbnetfs-c{client}/.smb"));
        let conf = dot.join("smbnetfs.conf");
        std::fs::write(&conf, "auth \"guest\" \"\"\nsmb_query_browsers \"false\"\n").unwrap();
        std::fs::set_permissions(&conf, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(
            dot.join("smb.conf"),
            "[global]\nclient min protocol = SMB2\n",
        )
        .unwrap();
        home
    }
}

/// The ssh client's configuration: the lab's key, no known hosts file, no
/// questions asked.
fn write_ssh_client_config(ssh: &Path) -> PathBuf {
    let path = ssh.join("ssh_config");
    let text = format!(
        "Host *\n  IdentityFile {}/client_key\n  IdentitiesOnly yes\n  \
         StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  \
         BatchMode yes\n  LogLevel ERROR\n",
        ssh.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

// ---------------------------------------------------------------------------
// MPI across the client hosts, without sshd.

/// mpirun's "remote shell" (`--mca plm_rsh_agent`): `AGENT HOST COMMAND...`
/// runs COMMAND (one shell line, as ssh would) in HOST's network namespace,
/// in a UTS namespace named HOST (so ranks see distinct host names), after
/// HOST's setup script (`hosts/HOST.sh`: the shared paths' bind mounts, in
/// the mount namespace `ip netns exec` gives it).
const RSH_AGENT: &str = r#"#!/bin/sh
host="$1"; shift
exec ip netns exec "$host" unshare --uts sh -c 'hostname "$1" && . "$2" && eval "$3"' sh \
  "$host" "$(dirname "$0")/hosts/$host.sh" "$*"
"#;

impl NetLab {
    /// One path that shows, on every client host under MPI, that client's
    /// own `paths[client]` (a bind mount in the host's mount namespace);
    /// outside MPI it is an empty directory.
    pub fn same_path(&mut self, paths: &[PathBuf]) -> PathBuf {
        assert_eq!(paths.len(), self.clients(), "one path per client");
        let common = self.subdir(&format!("same/{}", self.shared_paths));
        self.shared_paths += 1;
        for (client, path) in paths.iter().enumerate() {
            let line = format!(
                "mount --bind '{}' '{}' || exit 1\n",
                path.display(),
                common.display()
            );
            self.append_host_setup(client, &line);
        }
        common
    }

    /// Appends `line` to client `client`'s setup script.
    fn append_host_setup(&self, client: usize, line: &str) {
        use std::io::Write;
        let script = self.host_setup(client);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(script)
            .unwrap();
        file.write_all(line.as_bytes()).unwrap();
    }

    /// `hosts/HOST.sh`, made empty if missing.
    fn host_setup(&self, client: usize) -> PathBuf {
        let script = self
            .subdir("mpi/hosts")
            .join(format!("{}.sh", self.namespace(Host::Client(client))));
        if !script.exists() {
            std::fs::write(&script, "").unwrap();
        }
        script
    }

    /// The arguments of `mpirun` for `ranks_per_host` ranks on each client
    /// host (ranks 0.. on client 0, then client 1, ...): the lab's agent,
    /// hostfile, subnet and session directory; TCP only; ranks that yield
    /// while they wait (else an 8-byte ping-pong takes 8 ms on 2 cores).
    pub fn mpirun_args(&self, ranks_per_host: usize) -> Vec<String> {
        let dir = self.subdir("mpi");
        let agent = dir.join("rsh-agent");
        std::fs::write(&agent, RSH_AGENT).unwrap();
        std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
        let hostfile = dir.join("hostfile");
        let hosts: String = (0..self.clients())
            .map(|c| {
                self.host_setup(c);
                format!(
                    "{} slots={ranks_per_host}\n",
                    self.namespace(Host::Client(c))
                )
            })
            .collect();
        std::fs::write(&hostfile, hosts).unwrap();
        let sessions = self.subdir("mpi/sessions");
        let ranks = (ranks_per_host * self.clients()).to_string();
        let subnet = self.subnet();
        let mut args: Vec<String> = ["--allow-run-as-root", "-np", &ranks, "--hostfile"]
            .map(str::to_string)
            .to_vec();
        args.push(hostfile.display().to_string());
        for (name, value) in [
            ("plm_rsh_agent", agent.display().to_string()),
            ("plm_rsh_no_tree_spawn", "1".into()),
            ("pml", "ob1".into()),
            ("btl", "tcp,self".into()),
            ("btl_tcp_if_include", subnet.clone()),
            ("oob_tcp_if_include", subnet.clone()),
            ("mpi_yield_when_idle", "1".into()),
            ("orte_tmpdir_base", sessions.display().to_string()),
        ] {
            args.extend(["--mca".to_string(), name.to_string(), value]);
        }
        args
    }

    /// `mpirun ARGS` in the server's namespace (the machine's own namespace
    /// cannot reach the lab's subnet), ready for the program and its
    /// arguments.
    pub fn mpirun(&self, ranks_per_host: usize) -> Command {
        let mut command = self.command_in(Host::Server, "mpirun");
        command.args(self.mpirun_args(ranks_per_host));
        command
    }
}

// ---------------------------------------------------------------------------
// The server's own settings, changed as a configuration's setup commands
// change a NAS's (`ssh nas ...`).

impl NetLab {
    /// A directory of the lab on the machine's disk, at `disk/NAME` in the
    /// lab: a server's fsyncs there reach a disk, as a NAS's do (on the
    /// lab's tmpfs every fsync is free, so a setting that adds fsyncs would
    /// show nothing). It lies in the directory the lab's tmpfs is mounted
    /// on, reached through a bind mount of /tmp (which does not carry the
    /// tmpfs), and bound into the lab: the lab's teardown, also a killed
    /// run's, unmounts it and removes that directory with it. Make it
    /// before the daemons that serve it start: a daemon's mount namespace
    /// is a copy made as it starts, and the lab's mounts (private) do not
    /// reach it later (smbd then serves the tmpfs directory below). None
    /// (said on stderr) where /tmp itself is in RAM: no disk to give.
    pub fn disk_dir(&self, name: &str) -> Option<PathBuf> {
        if in_ram(Path::new(ROOT)) {
            eprintln!("skipping: {ROOT} is in RAM (tmpfs or ramfs), the lab has no disk");
            return None;
        }
        let below = self.subdir("below-tmpfs");
        must(Command::new("mount").args(["--bind", ROOT]).arg(&below));
        let on_disk = below.join(&self.name).join(name);
        let made = std::fs::create_dir_all(&on_disk);
        let dir = self.subdir(&format!("disk/{name}"));
        let bound =
            made.is_ok() && quiet_ok(Command::new("mount").arg("--bind").arg(&on_disk).arg(&dir));
        must(Command::new("umount").arg(&below));
        assert!(bound, "cannot bind {on_disk:?} ({made:?})");
        Some(dir)
    }

    /// The running smbd's configuration file (`start(Fs::Smb)`).
    pub fn smb_config(&self) -> PathBuf {
        self.dir.join("smb/smb.conf")
    }

    /// A shell line that runs `line` on the server, as `ssh nas 'LINE'`
    /// does on a real one: in the server's network namespace.
    pub fn on_server(&self, line: &str) -> String {
        let quoted = line.replace('\'', r"'\''");
        format!(
            "ip netns exec {} sh -c '{quoted}'",
            self.namespace(Host::Server)
        )
    }

    /// The shell line that makes the lab's smbd read its configuration
    /// again, every process of it (those serving the clients' open
    /// connections too), as `smbcontrol all reload-config` does on a NAS.
    pub fn smb_reload(&self) -> String {
        format!(
            "smbcontrol -s {} all reload-config",
            self.smb_config().display()
        )
    }

    /// Adds the share `[name]` of directory `path` (made before smbd
    /// started: [`NetLab::disk_dir`]) to the lab's running smbd with
    /// `options` (smb.conf lines) and reloads it; the share as every
    /// client of `smb` (the share `start(Fs::Smb)` gave) sees it.
    pub fn add_smb_share(&self, smb: &Share, name: &str, path: &Path, options: &str) -> Share {
        use std::io::Write;
        let section = format!(
            "[{name}]\npath = {}\nread only = no\nguest ok = yes\nforce user = root\n{options}",
            path.display()
        );
        let mut config = std::fs::OpenOptions::new()
            .append(true)
            .open(self.smb_config())
            .unwrap();
        config.write_all(section.as_bytes()).unwrap();
        must(Command::new("sh").args(["-c", &self.on_server(&self.smb_reload())]));
        self.smb_share(smb.mounts.clone(), name)
    }

    /// Share `[name]` as each smbnetfs mount in `mounts` shows it (under
    /// the server's address), once smbd serves it.
    fn smb_share(&self, mounts: Vec<PathBuf>, name: &str) -> Share {
        let server = self.address(Host::Server).to_string();
        let clients: Vec<PathBuf> = mounts.iter().map(|m| m.join(&server).join(name)).collect();
        for dir in &clients {
            self.wait_for("smbd", || dir.is_dir());
        }
        Share {
            fs: Fs::Smb,
            clients,
            mounts,
        }
    }

    /// What the server's smb.conf sets `parameter` of share `[share]` to,
    /// as `testparm` reads it (Samba's default when it is not set).
    pub fn smb_parameter(&self, share: &str, parameter: &str) -> String {
        let config = self.smb_config().display().to_string();
        let out = self.run_in(
            Host::Server,
            &[
                "testparm",
                "-s",
                "--section-name",
                share,
                "--parameter-name",
                parameter,
                &config,
            ],
        );
        assert!(
            out.status.success(),
            "testparm: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
    /// A shell line that runs the gluster CLI on the server with `args`,
    /// as `ssh nas gluster ...` does on a real one: in glusterd's network
    /// and mount namespaces, where its socket is (`start(Fs::Gluster)`).
    pub fn gluster_line(&self, args: &str) -> String {
        let pid = self.glusterd.expect("glusterd started");
        format!("nsenter -t {pid} -m -n gluster --mode=script {args}")
    }

    /// What the lab's volume sets `option` to, as glusterd says it.
    pub fn gluster_option(&self, option: &str) -> String {
        let out = self.gluster_cli(&["volume", "get", "fsbench", option]);
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .find_map(|l| l.strip_prefix(option))
            .map(|value| value.trim().to_string())
            .unwrap_or_else(|| panic!("gluster volume get {option}: {text}"))
    }
}

/// Runs a step whose failure the caller reports with more context.
fn quiet_ok(command: &mut Command) -> bool {
    command
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Whether `path` is on a file system in RAM (tmpfs, ramfs), where an
/// fsync costs nothing.
fn in_ram(path: &Path) -> bool {
    const TMPFS_MAGIC: u64 = 0x0102_1994;
    const RAMFS_MAGIC: u64 = 0x8584_58f6;
    rustix::fs::statfs(path)
        .is_ok_and(|stat| [TMPFS_MAGIC, RAMFS_MAGIC].contains(&(stat.f_type as u64)))
}
