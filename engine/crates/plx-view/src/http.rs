//! The HTTP/1.1 connection layer of `plx view`'s server, bounded against idle and hostile
//! clients: at most [`Limits::connections`] connections at once (a new one closes the one that
//! has waited longest for its request), a request head of at most [`Limits::line`] bytes a
//! line and [`Limits::head`] in all (else 431), and [`Limits::time`] to send it (else 408).
//!
//! Threads: [`Limits::answerers`] threads compute the answers, each request taken by whichever
//! is free, so a slow answer (a first replay of the whole trace) holds one of them while the
//! others go on answering zooms; one thread accepts; one thread per open connection reads its
//! requests, hands each to the answerers through a channel and writes the answer back. So the
//! threads are at most `connections + answerers + 1`, the memory held for requests at most
//! `connections × head` bytes, the descriptors two per connection (its stream, and the
//! acceptor's handle to close it). A [`Body::Written`] answer is counted, then written by its
//! answerer in pieces of [`PIECE`] bytes that its connection sends as they come (at most two
//! pieces held), so an answer larger than memory is never held whole.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one server accepts.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once.
    pub connections: usize,
    /// Bytes of one line of a request head (request line or header).
    pub line: usize,
    /// Bytes of a request head in all.
    pub head: usize,
    /// Time to send a whole request head, from when the connection waits for it; also the time
    /// an answer may take to be written.
    pub time: Duration,
    /// Threads computing answers at once (at least 1).
    pub answerers: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: 64,
            line: 8 * 1024,
            head: 64 * 1024,
            time: Duration::from_secs(10),
            answerers: 4,
        }
    }
}

/// A request head: method, target, headers (names lower-case, in order).
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `GET`, ...
    pub method: String,
    /// The target, path and query (`/api/meta?token=...`).
    pub target: String,
    /// The headers, names lower-case.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The values of header `name` (lower-case).
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An answer: status, content type, extra headers, body.
pub struct Reply<'a> {
    /// HTTP status.
    pub status: u16,
    /// Headers beyond `Content-Length` and `Connection`.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Body<'a>,
}

/// A body to send.
pub enum Body<'a> {
    /// These bytes.
    Bytes(Vec<u8>),
    /// The bytes this writes, called twice: once to count them (`Content-Length`), once to send
    /// them in pieces as they are made. It must write the same bytes both times.
    Written(Writer<'a>),
}

/// What writes a [`Body::Written`].
pub type Writer<'a> = Box<dyn Fn(&mut dyn Write) -> std::io::Result<()> + 'a>;

impl Body<'_> {
    /// The whole body (a [`Body::Written`] one written into memory).
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Body::Bytes(b) => b.clone(),
            Body::Written(write) => {
                let mut b = Vec::new();
                // writing into a Vec fails only where `write` itself fails
                let _ = write(&mut b);
                b
            }
        }
    }
}

/// The bytes of a piece of a [`Body::Written`] answer.
pub const PIECE: usize = 64 * 1024;

/// A reply as its connection gets it: the head, and the body whole or in pieces.
struct Sent {
    status: u16,
    headers: Vec<(String, String)>,
    len: u64,
    body: SentBody,
}

enum SentBody {
    Whole(Vec<u8>),
    /// The pieces, until the sender is gone.
    Pieces(Receiver<Vec<u8>>),
}

impl Sent {
    fn whole(r: &Reply) -> Sent {
        let b = r.body.bytes();
        Sent {
            status: r.status,
            headers: r.headers.clone(),
            len: b.len() as u64,
            body: SentBody::Whole(b),
        }
    }
}

/// Counts the bytes written to it.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Sends what is written to it to a connection, a write at a time (put a `BufWriter` of
/// [`PIECE`] bytes before it); fails once the connection is gone.
struct ToConnection(SyncSender<Vec<u8>>);

impl Write for ToConnection {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .send(b.to_vec())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// One open connection as the acceptor sees it.
struct Slot {
    id: u64,
    stream: TcpStream,
    /// Waiting for a request head since then (`None`: its request is being answered).
    waiting: Option<Instant>,
}

/// The open connections, shared by the acceptor and the connection threads.
#[derive(Default)]
struct Slots {
    open: Vec<Slot>,
    next: u64,
}

type Job = (Request, Sender<Sent>);

/// Serves `listener` until the process ends, `answer` computing each request's reply on one of
/// [`Limits::answerers`] threads.
pub fn serve<'a>(
    listener: TcpListener,
    limits: Limits,
    answer: impl Fn(&Request) -> Reply<'a> + Sync,
) {
    let (jobs, incoming) = channel::<Job>();
    let slots = Arc::new(Mutex::new(Slots::default()));
    let threads = Arc::new(AtomicUsize::new(0));
    let acceptor = std::thread::Builder::new()
        .name("plx-view-accept".into())
        .spawn(move || accept_loop(listener, limits, jobs, slots, threads));
    if acceptor.is_err() {
        return;
    }
    // the acceptor holds the only sender and never ends: neither do the answerers
    let incoming = Mutex::new(incoming);
    std::thread::scope(|s| {
        for _ in 1..limits.answerers.max(1) {
            let spawned = std::thread::Builder::new()
                .name("plx-view-answer".into())
                .spawn_scoped(s, || answer_loop(&incoming, &answer));
            if spawned.is_err() {
                break;
            }
        }
        answer_loop(&incoming, &answer);
    });
}

fn answer_loop<'a>(incoming: &Mutex<Receiver<Job>>, answer: &impl Fn(&Request) -> Reply<'a>) {
    loop {
        // one answerer waits for the next request at a time; the others wait for the lock
        let job = incoming.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok((req, back)) = job else { return };
        let r = answer(&req);
        // a connection that went away is no error of the server's
        let Body::Written(write) = r.body else {
            let _ = back.send(Sent::whole(&r));
            continue;
        };
        let mut count = Count(0);
        let counted = write(&mut count);
        let (pieces, body) = sync_channel(1);
        let sent = Sent {
            status: r.status,
            headers: r.headers,
            len: count.0,
            body: SentBody::Pieces(body),
        };
        if counted.is_err() || back.send(sent).is_err() {
            continue;
        }
        let mut out = std::io::BufWriter::with_capacity(PIECE, ToConnection(pieces));
        // fails where the connection went away: it stops reading, and so this writing
        let _ = write(&mut out).and_then(|_| out.flush());
    }
}

fn accept_loop(
    listener: TcpListener,
    limits: Limits,
    jobs: Sender<Job>,
    slots: Arc<Mutex<Slots>>,
    threads: Arc<AtomicUsize>,
) {
    loop {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            // out of descriptors or memory for a moment, or a connection reset before it was
            // accepted: the listener stays, the next accept may succeed
            Err(_) => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        admit(stream, limits, &jobs, &slots, &threads);
    }
}

/// Takes `stream` in: closes the connection waiting longest when all slots are taken, or
/// refuses `stream` with 503 when every open one is being answered.
fn admit(
    stream: TcpStream,
    limits: Limits,
    jobs: &Sender<Job>,
    slots: &Arc<Mutex<Slots>>,
    threads: &Arc<AtomicUsize>,
) {
    {
        let mut s = slots.lock().unwrap_or_else(|e| e.into_inner());
        if s.open.len() >= limits.connections {
            let oldest = s
                .open
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.waiting.map(|t| (t, i)))
                .min()
                .map(|(_, i)| i);
            match oldest {
                Some(i) => {
                    // its thread sees the end of its stream and leaves
                    let _ = s.open.swap_remove(i).stream.shutdown(Shutdown::Both);
                }
                None => return refuse(stream, limits),
            }
        }
    }
    // the thread of a closed connection leaves at once: wait for it, so that the threads stay
    // at most one per slot
    let deadline = Instant::now() + LINGER;
    while threads.load(Ordering::SeqCst) >= limits.connections {
        if Instant::now() >= deadline {
            return refuse(stream, limits);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let id = {
        let mut s = slots.lock().unwrap_or_else(|e| e.into_inner());
        s.next += 1;
        let id = s.next;
        s.open.push(Slot {
            id,
            stream: clone,
            waiting: Some(Instant::now()),
        });
        id
    };
    threads.fetch_add(1, Ordering::SeqCst);
    let (jobs, slots2, threads2) = (jobs.clone(), Arc::clone(slots), Arc::clone(threads));
    let spawned = std::thread::Builder::new()
        .name("plx-view-conn".into())
        .stack_size(256 * 1024)
        .spawn(move || {
            connection(stream, id, limits, &jobs, &slots2);
            leave(&slots2, id);
            threads2.fetch_sub(1, Ordering::SeqCst);
        });
    if spawned.is_err() {
        leave(slots, id);
        threads.fetch_sub(1, Ordering::SeqCst);
    }
}

fn leave(slots: &Mutex<Slots>, id: u64) {
    let mut s = slots.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = s.open.iter().position(|c| c.id == id) {
        s.open.swap_remove(i);
    }
}

fn set_waiting(slots: &Mutex<Slots>, id: u64, waiting: Option<Instant>) {
    let mut s = slots.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = s.open.iter_mut().find(|c| c.id == id) {
        c.waiting = waiting;
    }
}

fn refuse(mut stream: TcpStream, limits: Limits) {
    let _ = stream.set_write_timeout(Some(limits.time));
    let _ = write_reply(
        &mut stream,
        Sent::whole(&plain(503, "too many connections\n")),
        true,
    );
}

/// A plain-text reply.
pub fn plain(status: u16, msg: &str) -> Reply<'static> {
    Reply {
        status,
        headers: vec![("Content-Type".into(), "text/plain; charset=utf-8".into())],
        body: Body::Bytes(msg.as_bytes().to_vec()),
    }
}

/// Why no request head was read.
#[derive(Debug, PartialEq, Eq)]
enum HeadError {
    /// The client closed (or was closed) before a request began.
    Closed,
    /// A line or the head too long.
    TooLarge,
    /// Not HTTP/1.x.
    Bad(&'static str),
    /// Not all of it within the time.
    Timeout,
}

/// Reads and answers the requests of one connection until it closes, errs or asks to close.
fn connection(
    mut stream: TcpStream,
    id: u64,
    limits: Limits,
    jobs: &Sender<Job>,
    slots: &Mutex<Slots>,
) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(limits.time));
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let head = read_head(&mut stream, &mut buf, limits);
        let req = match head {
            Ok(r) => r,
            Err(HeadError::Closed) => return,
            Err(e) => {
                let r = match e {
                    HeadError::TooLarge => plain(431, "request head too large\n"),
                    HeadError::Timeout => plain(408, "request not sent in time\n"),
                    HeadError::Bad(why) => plain(400, &format!("bad request: {why}\n")),
                    HeadError::Closed => unreachable!(),
                };
                refuse_and_close(stream, &r);
                return;
            }
        };
        // GET only: a request with a body is refused, its body not read
        let body = req.all("transfer-encoding").next().is_some()
            || req
                .all("content-length")
                .any(|v| v.trim().parse::<u64>() != Ok(0));
        if body {
            refuse_and_close(stream, &plain(413, "no request body is read\n"));
            return;
        }
        let close = req
            .all("connection")
            .any(|v| v.to_ascii_lowercase().contains("close"));
        set_waiting(slots, id, None);
        let (back, reply) = channel();
        if jobs.send((req, back)).is_err() {
            return;
        }
        let Ok(r) = reply.recv() else { return };
        if write_reply(&mut stream, r, close).is_err() || close {
            return;
        }
        set_waiting(slots, id, Some(Instant::now()));
    }
}

/// Writes `r` and closes `stream` gracefully: the client is told it is done (FIN), then what it
/// still sends is read and dropped, at most [`LINGER_BYTES`] for at most [`LINGER`], so that
/// closing with unread bytes does not reset the connection before the client has read `r`.
fn refuse_and_close(mut stream: TcpStream, r: &Reply) {
    if write_reply(&mut stream, Sent::whole(r), true).is_err()
        || stream.shutdown(Shutdown::Write).is_err()
    {
        return;
    }
    let deadline = Instant::now() + LINGER;
    let mut sink = [0u8; 16 * 1024];
    let mut dropped = 0;
    while dropped < LINGER_BYTES {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(n) => dropped += n,
        }
    }
}

/// How long and how much a refused client's bytes are read after the answer.
const LINGER: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 1 << 20;

/// Reads one request head from `stream` (bytes after it stay in `buf` for the next), within
/// `limits`.
fn read_head(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    limits: Limits,
) -> Result<Request, HeadError> {
    let deadline = Instant::now() + limits.time;
    let mut chunk = [0u8; 4096];
    loop {
        let end = head_end(buf);
        check_lines(&buf[..end.unwrap_or(buf.len())], limits)?;
        if let Some(end) = end {
            let head: Vec<u8> = buf.drain(..end).collect();
            return parse(&head);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(HeadError::Timeout);
        }
        let _ = stream.set_read_timeout(Some(left));
        // never more than the head may still take
        let room = (limits.head + 4 - buf.len().min(limits.head)).min(chunk.len());
        match stream.read(&mut chunk[..room]) {
            Ok(0) if buf.iter().all(|b| b.is_ascii_whitespace()) => return Err(HeadError::Closed),
            Ok(0) => return Err(HeadError::Bad("the connection closed within the request")),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(if buf.is_empty() {
                    HeadError::Closed
                } else {
                    HeadError::Timeout
                })
            }
            Err(_) => return Err(HeadError::Closed),
        }
    }
}

/// Where the head in `buf` ends (after its blank line), if it does.
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut line_start = 0;
    for (i, &b) in buf.iter().enumerate() {
        if b == b'\n' {
            let line = &buf[line_start..i];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            // blank lines before the request line are allowed (RFC 9112 §2.2)
            if line.is_empty() && buf[..line_start].iter().any(|b| !b.is_ascii_whitespace()) {
                return Some(i + 1);
            }
            line_start = i + 1;
        }
    }
    None
}

/// `Err(TooLarge)` when the incomplete head in `buf` already breaks a limit.
fn check_lines(buf: &[u8], limits: Limits) -> Result<(), HeadError> {
    if buf.len() > limits.head {
        return Err(HeadError::TooLarge);
    }
    if buf.split(|&b| b == b'\n').any(|l| l.len() > limits.line) {
        return Err(HeadError::TooLarge);
    }
    Ok(())
}

fn parse(head: &[u8]) -> Result<Request, HeadError> {
    let text = std::str::from_utf8(head).map_err(|_| HeadError::Bad("not text"))?;
    let mut lines = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .skip_while(|l| l.is_empty());
    let first = lines.next().ok_or(HeadError::Bad("no request line"))?;
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Bad("not METHOD TARGET VERSION"));
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || !target.starts_with('/') {
        return Err(HeadError::Bad("not an HTTP/1 request"));
    }
    let mut headers = Vec::new();
    for l in lines.take_while(|l| !l.is_empty()) {
        if l.starts_with([' ', '\t']) {
            return Err(HeadError::Bad("a folded header line"));
        }
        let (k, v) = l
            .split_once(':')
            .ok_or(HeadError::Bad("a header without ':'"))?;
        if k.is_empty() || k.ends_with([' ', '\t']) {
            return Err(HeadError::Bad("a header name with white space"));
        }
        headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
    }
    Ok(Request {
        method: method.to_string(),
        target: target.to_string(),
        headers,
    })
}

fn write_reply(stream: &mut TcpStream, r: Sent, close: bool) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", r.status, reason(r.status));
    for (k, v) in &r.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: {}\r\n\r\n",
        r.len,
        if close { "close" } else { "keep-alive" }
    ));
    stream.write_all(head.as_bytes())?;
    match r.body {
        SentBody::Whole(b) => stream.write_all(&b)?,
        SentBody::Pieces(pieces) => {
            let mut sent = 0u64;
            for piece in pieces {
                sent += piece.len() as u64;
                if sent > r.len {
                    break;
                }
                stream.write_all(&piece)?;
            }
            if sent != r.len {
                // the body was not what was counted: the client must not wait for the rest
                return Err(std::io::Error::other("answer not the length announced"));
            }
        }
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lim() -> Limits {
        Limits::default()
    }

    #[test]
    fn a_head_parses_into_method_target_and_headers() {
        let r = parse(b"GET /api/meta?token=x HTTP/1.1\r\nHost: 127.0.0.1:80\r\nX-A:  b \r\n\r\n")
            .unwrap();
        assert_eq!(r.method, "GET");
        assert_eq!(r.target, "/api/meta?token=x");
        assert_eq!(
            r.headers,
            vec![
                ("host".to_string(), "127.0.0.1:80".to_string()),
                ("x-a".to_string(), "b".to_string())
            ]
        );
        assert_eq!(
            parse(b"GET / HTTP/1.1\r\n folded\r\n\r\n").unwrap_err(),
            HeadError::Bad("a folded header line")
        );
        assert_eq!(
            parse(b"GET /\r\n\r\n").unwrap_err(),
            HeadError::Bad("not METHOD TARGET VERSION")
        );
    }

    #[test]
    fn a_head_ends_at_its_blank_line_and_lines_are_bounded() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nA: b\r\n\r\nGET"), Some(24));
        assert_eq!(head_end(b"\r\nGET / HTTP/1.1\n\n"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nA: b\r\n"), None);
        let long = vec![b'a'; 8 * 1024 + 1];
        assert_eq!(check_lines(&long, lim()), Err(HeadError::TooLarge));
        assert_eq!(check_lines(&long[1..], lim()), Ok(()));
        let many = b"X: 0123456789\r\n".repeat(64 * 1024 / 15 + 1);
        assert_eq!(check_lines(&many, lim()), Err(HeadError::TooLarge));
    }
}
