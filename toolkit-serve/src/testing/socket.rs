//! [`tcp_nodelay`]: whether a process's TCP connection has `TCP_NODELAY` set, read from the
//! connection itself, so that a test can check what a server did to the sockets it accepted.

use std::io;
use std::net::{SocketAddr, TcpStream};

use rustix::process::{Pid, PidfdFlags, PidfdGetfdFlags, pidfd_getfd, pidfd_open};

/// Whether `TCP_NODELAY` is set on the TCP connection of process `pid` (this process's own id
/// works too) between `local` (its end) and `peer` (the other end): for a server's accepted
/// connection, `local` is the server's address and `peer` the client's.
///
/// The connection is found among the process's open files (`/proc/PID/fd`) and duplicated with
/// `pidfd_getfd` (Linux 5.6 and later): the caller must be allowed to trace the process (its
/// parent is, as is the process itself and root).
///
/// # Errors
///
/// [`io::ErrorKind::NotFound`] when the process holds no such connection; the system's error
/// when the process cannot be opened or its files cannot be read or duplicated.
pub fn tcp_nodelay(pid: u32, local: SocketAddr, peer: SocketAddr) -> io::Result<bool> {
    let raw = i32::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let pid = Pid::from_raw(raw).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let process = pidfd_open(pid, PidfdFlags::empty())?;
    for entry in std::fs::read_dir(format!("/proc/{raw}/fd"))? {
        let entry = entry?;
        // A file closed since the directory was read has no link any more: skip it.
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        if !target.to_string_lossy().starts_with("socket:") {
            continue;
        }
        let Some(number) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(copy) = pidfd_getfd(&process, number, PidfdGetfdFlags::empty()) else {
            continue;
        };
        // A socket that is not a connected TCP one (a listener, a Unix socket) has no addresses
        // to compare and is passed over.
        let stream = TcpStream::from(copy);
        if stream.local_addr().ok() == Some(local) && stream.peer_addr().ok() == Some(peer) {
            return stream.nodelay();
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("process {raw} holds no TCP connection from {local} to {peer}"),
    ))
}
