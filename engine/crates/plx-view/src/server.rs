//! The local HTTP server: every request must carry the token drawn at start (`?token=`, or the
//! cookie the one-time address of `--open` sets), else 403; its `Host` must name this server by
//! address (or `localhost`) and port, and an `Origin`, when sent, be this server's, else 403
//! (DNS rebinding, requests from other sites). It answers only the embedded page and bundle and
//! the JSON API, never a file from disk.

use std::collections::HashMap;
use std::net::{IpAddr, TcpListener};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::api::Viewer;
use crate::http::{self, Body, Limits, Reply, Request};
use crate::ViewError;

mod bundle {
    include!(concat!(env!("OUT_DIR"), "/bundle.rs"));
}

/// The page that loads the bundle (`__TOKEN__` replaced per request).
const PAGE: &str = include_str!("../../../../viewer/index.html");

/// The embedded bundle, `None` when this binary was built without one.
pub fn bundle() -> Option<&'static [u8]> {
    bundle::BUNDLE
}

/// Where to listen.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Address to bind (127.0.0.1 unless chosen).
    pub bind: String,
    /// Port (0: a free one).
    pub port: u16,
}

/// How long the one-time address (`--open`) may be used.
pub const ONE_TIME: Duration = Duration::from_secs(30);

/// A bound server and its token.
pub struct Server {
    listener: TcpListener,
    gate: Gate,
    /// The address it listens on, `host:port`.
    pub addr: String,
    /// What it accepts of a client.
    pub limits: Limits,
}

/// Who may ask: the token (in the query or the cookie), the names the server may be reached by,
/// and the one-time address that hands the cookie to the browser `--open` starts.
pub struct Gate {
    token: String,
    port: u16,
    /// Host names (lower-case) accepted besides the loopback addresses; `None`: any IP address
    /// (bound to every address).
    hosts: Option<Vec<String>>,
    cookie: String,
    /// The one-time address, shared by the threads that answer.
    once: Mutex<Once>,
}

/// The one-time address's state.
#[derive(Default)]
struct Once {
    /// Its nonce and until when it holds; `None` once used or never made.
    nonce: Option<(String, Instant)>,
    /// A nonce already used, to warn when it comes again.
    used: Vec<String>,
}

/// 16 random bytes from the OS, in hex.
pub fn random_token() -> Result<String, ViewError> {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b).map_err(|e| ViewError::Random(e.to_string()))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// An answer: status, content type, body.
pub struct Answer<'a> {
    /// HTTP status.
    pub status: u16,
    /// Content type.
    pub content_type: &'static str,
    /// Body.
    pub body: Body<'a>,
    /// Headers beyond the usual ones (`Set-Cookie`, `Location`).
    pub extra: Vec<(String, String)>,
}

impl Answer<'_> {
    fn json<T: serde::Serialize>(v: T) -> Answer<'static> {
        match serde_json::to_vec(&v) {
            Ok(body) => Answer {
                status: 200,
                content_type: "application/json",
                body: Body::Bytes(body),
                extra: Vec::new(),
            },
            Err(e) => Answer::error(500, &format!("the answer could not be written: {e}\n")),
        }
    }

    fn error(status: u16, msg: &str) -> Answer<'static> {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: Body::Bytes(msg.as_bytes().to_vec()),
            extra: Vec::new(),
        }
    }
}

/// Equal, in time independent of where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// A `tracks` value: track indices separated by commas (sent as `%2C` by a browser's
/// URLSearchParams).
/// The numeric parameters of `q` (each a whole number at least its least value: `bins` 1,
/// `width` and `max` 0; the indices `track`, `depth`, `index` and `id` any whole number, an
/// unknown one answered 404 by its route) and `tracks` (indices of the `n` tracks), checked:
/// 400 naming the parameter and what it should be.
fn numbers_checked(q: &HashMap<&str, &str>, n: usize) -> Result<(), Answer<'static>> {
    const LEAST: [(&str, i64); 7] = [
        ("width", 0),
        ("bins", 1),
        ("max", 0),
        ("track", i64::MIN),
        ("depth", i64::MIN),
        ("index", i64::MIN),
        ("id", i64::MIN),
    ];
    for (k, least) in LEAST {
        let Some(v) = q.get(k) else { continue };
        match v.parse::<i64>() {
            Ok(x) if x >= least => {}
            Ok(_) => {
                return Err(Answer::error(
                    400,
                    &format!("bad parameter: {k}={v} is less than {least}\n"),
                ))
            }
            Err(_) => {
                return Err(Answer::error(
                    400,
                    &format!(
                        "bad parameter: {k}={} is not a whole number\n",
                        percent_decode(v)
                    ),
                ))
            }
        }
    }
    if let Some(v) = q.get("tracks") {
        for x in percent_decode(v)
            .split(',')
            .filter(|x| !x.trim().is_empty())
        {
            if !x.trim().parse::<usize>().is_ok_and(|i| i < n) {
                return Err(Answer::error(
                    400,
                    &format!(
                        "bad parameter: tracks holds {}, not a track (0 to {})\n",
                        x.trim(),
                        n.saturating_sub(1)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn tracks_of(v: &str) -> Vec<usize> {
    percent_decode(v)
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect()
}

fn query(s: &str) -> HashMap<&str, &str> {
    s.split('&')
        .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// A query value as sent (`+` for a space, `%XX` for a byte), decoded; bytes that are not
/// UTF-8 replaced.
fn percent_decode(v: &str) -> String {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn forbidden() -> Answer<'static> {
    Answer::error(
        403,
        "forbidden: this address needs the token plx view printed\n",
    )
}

/// Answers `GET url` for `viewer` with `token` required in the query.
pub fn handle<'v>(viewer: &'v Viewer, token: &str, method: &str, url: &str) -> Answer<'v> {
    let (_, qs) = url.split_once('?').unwrap_or((url, ""));
    if !query(qs).get("token").is_some_and(|t| same(t, token)) {
        return forbidden();
    }
    if method != "GET" {
        return Answer::error(405, "only GET\n");
    }
    route(viewer, token, url)
}

/// Answers `url` of a client already let in; `page_token` is written into the page (empty when
/// the client came with the cookie: the page then sends none).
fn route<'v>(viewer: &'v Viewer, page_token: &str, url: &str) -> Answer<'v> {
    let (path, qs) = url.split_once('?').unwrap_or((url, ""));
    let q = query(qs);
    // a numeric parameter that is not a whole number, or below its least value, is refused
    // (400) before any answer: never read as its default
    if let Err(a) = numbers_checked(&q, viewer.index.tracks.len()) {
        return a;
    }
    let num = |k: &str, d: i64| -> i64 { q.get(k).and_then(|v| v.parse().ok()).unwrap_or(d) };
    // the window `[t0, t1)` of a query (the whole run where it names neither end); a bound
    // that is not a whole number of ns, or an end not after the start, is refused with 400
    let span = (viewer.index.end - viewer.index.origin).max(1);
    let window = || window_of(&q, span);
    match path {
        "/" | "/index.html" => Answer {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: Body::Bytes(PAGE.replace("__TOKEN__", page_token).into_bytes()),
            extra: Vec::new(),
        },
        "/viewer.js" => match bundle() {
            Some(b) => Answer {
                status: 200,
                content_type: "text/javascript; charset=utf-8",
                body: Body::Bytes(b.to_vec()),
                extra: Vec::new(),
            },
            None => Answer::error(404, "this plx was built without the viewer's bundle\n"),
        },
        "/api/meta" => Answer::json(viewer.meta()),
        "/api/window" => {
            let (t0, t1) = match window() {
                Ok(w) => w,
                Err(a) => return a,
            };
            Answer {
                status: 200,
                content_type: "application/json",
                body: Body::Bytes(
                    viewer
                        .window(
                            t0,
                            t1,
                            num("width", 1000).clamp(1, 20_000) as u32,
                            num("max", 5000).clamp(0, 1_000_000) as usize,
                        )
                        .into_bytes(),
                ),
                extra: Vec::new(),
            }
        }
        "/api/region" => match viewer.region(
            num("track", -1) as usize,
            num("depth", -1) as usize,
            num("index", -1) as usize,
        ) {
            Some(v) => Answer::json(v),
            None => Answer::error(404, "no such region\n"),
        },
        "/api/stats" => match window() {
            Ok((t0, t1)) => Answer::json(viewer.stats(t0, t1)),
            Err(a) => a,
        },
        "/api/series" => Answer::json(viewer.series()),
        "/api/counters" => Answer {
            status: 200,
            content_type: "application/json",
            body: Body::Bytes(viewer.counters().as_bytes().to_vec()),
            extra: Vec::new(),
        },
        "/api/search" => Answer::json(viewer.search(
            &percent_decode(q.get("name").copied().unwrap_or("")),
            num("max", 100_000).clamp(0, 10_000_000) as usize,
        )),
        "/api/flame" => match window() {
            Ok((t0, t1)) => {
                let tracks = tracks_of(q.get("tracks").copied().unwrap_or(""));
                Answer::json(viewer.flame(t0, t1, &tracks))
            }
            Err(a) => a,
        },
        "/api/profile" => {
            let profile = viewer.profile();
            Answer {
                status: 200,
                content_type: "application/json",
                body: Body::Written(Box::new(move |out| {
                    serde_json::to_writer(out, &profile).map_err(std::io::Error::other)
                })),
                extra: Vec::new(),
            }
        }
        "/api/waits" => match window() {
            Ok((t0, t1)) => Answer::json(viewer.waits_if_ready(
                t0,
                t1,
                num("max", 5000).clamp(0, 100_000) as usize,
            )),
            Err(a) => a,
        },
        "/api/wait" => match usize::try_from(num("id", -1))
            .ok()
            .and_then(|i| viewer.wait_if_ready(i))
        {
            Some(v) => Answer::json(v),
            None => Answer::error(404, "no such wait\n"),
        },
        "/api/sample_lane" => match window() {
            Ok((t0, t1)) => {
                Answer::json(viewer.sample_lane(t0, t1, num("width", 1000).clamp(1, 20_000) as u32))
            }
            Err(a) => a,
        },
        "/api/samples" => {
            let tracks = tracks_of(q.get("tracks").copied().unwrap_or(""));
            // a window when the query names one (the selection's), else the whole run
            let window = match (q.contains_key("t0") || q.contains_key("t1")).then(window) {
                Some(Ok(w)) => Some(w),
                Some(Err(a)) => return a,
                None => None,
            };
            Answer::json(viewer.samples(&tracks, window))
        }
        "/api/comm" => Answer::json(viewer.comm()),
        "/api/critpath" => Answer::json(viewer.critpath()),
        "/api/compare" => Answer::json(viewer.compare()),
        "/api/displays" => Answer::json(viewer.displays(num("bins", 200).max(1) as usize)),
        _ => Answer::error(404, "not found\n"),
    }
}

/// The window `[t0, t1)` a query names, in ns from the trace's first event: `t0` 0 and `t1`
/// `span` where absent. A bound that is not a whole number (`NaN`, `inf`, `1e3`, text) or an end
/// not after the start is refused: 400, saying which.
fn window_of(q: &HashMap<&str, &str>, span: i64) -> Result<(i64, i64), Answer<'static>> {
    let bound = |k: &str, d: i64| match q.get(k) {
        None => Ok(d),
        Some(v) => v.parse::<i64>().map_err(|_| {
            Answer::error(
                400,
                &format!(
                    "bad window: {k}={} is not a whole number of ns\n",
                    percent_decode(v)
                ),
            )
        }),
    };
    let (t0, t1) = (bound("t0", 0)?, bound("t1", span)?);
    if t1 <= t0 {
        return Err(Answer::error(
            400,
            &format!(
                "bad window: t1={t1} is not after t0={t0} (a window [t0, t1) needs t0 < t1)\n"
            ),
        ));
    }
    Ok((t0, t1))
}

/// `host:port` split, the host an IP address when it is one (`[v6]` unbracketed).
fn host_port(h: &str) -> Option<(Result<IpAddr, String>, u16)> {
    let (host, port) = match h.strip_prefix('[') {
        Some(rest) => {
            let (ip, after) = rest.split_once(']')?;
            (ip.parse::<std::net::Ipv6Addr>().ok()?.into(), after)
        }
        None => {
            let (host, port) = h.rsplit_once(':')?;
            let host = host
                .parse::<std::net::Ipv4Addr>()
                .map(IpAddr::from)
                .map_err(|_| host.to_ascii_lowercase());
            return Some((host, port.parse().ok()?));
        }
    };
    Some((Ok(host), port.strip_prefix(':')?.parse().ok()?))
}

impl Gate {
    fn new(token: String, bind: &str, port: u16) -> Gate {
        let bind_ip = bind
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>();
        let hosts = match bind_ip {
            Ok(ip) if ip.is_unspecified() => None,
            Ok(ip) => Some(vec![ip.to_string()]),
            Err(_) => Some(vec![bind.to_ascii_lowercase()]),
        };
        Gate {
            token,
            port,
            hosts,
            cookie: format!("plx_view_{port}"),
            once: Mutex::new(Once::default()),
        }
    }

    /// Does `host` (a `Host` header) name this server: `localhost`, 127.0.0.1 or ::1, the
    /// address it was bound to (any IP address when bound to all), with its port? A name other
    /// than these could be one whose DNS answer an attacker's site changes to 127.0.0.1.
    fn host_ok(&self, host: &str) -> bool {
        let Some((h, port)) = host_port(host) else {
            return false;
        };
        if port != self.port {
            return false;
        }
        match h {
            Ok(ip) => {
                ip.is_loopback() && (ip == IpAddr::from([127, 0, 0, 1]) || ip.is_ipv6())
                    || match &self.hosts {
                        None => true,
                        Some(names) => names.iter().any(|n| *n == ip.to_string()),
                    }
            }
            Err(name) => {
                name == "localhost" || self.hosts.as_ref().is_some_and(|n| n.contains(&name))
            }
        }
    }

    /// 403 unless the request's `Host` names this server and its `Origin`, if any, is this
    /// server's own.
    fn place(&self, req: &Request) -> Result<(), Answer<'static>> {
        let hosts: Vec<&str> = req.all("host").collect();
        let host = match hosts[..] {
            [h] if self.host_ok(h) => h,
            [h] => {
                return Err(Answer::error(
                    403,
                    &format!(
                        "forbidden: Host {h:?} is not this server's address (127.0.0.1:{p}, \
                         localhost:{p} or [::1]:{p})\n",
                        p = self.port
                    ),
                ))
            }
            [] => return Err(Answer::error(403, "forbidden: no Host header\n")),
            _ => return Err(Answer::error(400, "more than one Host header\n")),
        };
        for origin in req.all("origin") {
            if !origin.eq_ignore_ascii_case(&format!("http://{host}")) {
                return Err(Answer::error(
                    403,
                    &format!("forbidden: a request from another site (Origin {origin:?})\n"),
                ));
            }
        }
        Ok(())
    }

    /// The token if the request carries it (query or cookie): `Some(token for the page)`.
    fn admitted(&self, req: &Request) -> Option<&str> {
        let (_, qs) = req.target.split_once('?').unwrap_or((&req.target, ""));
        if query(qs).get("token").is_some_and(|t| same(t, &self.token)) {
            return Some(&self.token);
        }
        let cookie = req
            .all("cookie")
            .flat_map(|c| c.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .any(|(k, v)| k == self.cookie && same(v, &self.token));
        cookie.then_some("")
    }

    /// A new one-time path (`/open?once=NONCE`), usable once within [`ONE_TIME`]; any earlier
    /// one is void.
    pub fn one_time(&self) -> Result<String, ViewError> {
        let nonce = random_token()?;
        let path = format!("/open?once={nonce}");
        self.once().nonce = Some((nonce, Instant::now() + ONE_TIME));
        Ok(path)
    }

    fn once(&self) -> std::sync::MutexGuard<'_, Once> {
        self.once.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `/open?once=NONCE`: the cookie and a redirection to the page the first time within
    /// [`ONE_TIME`], else 403 (and a warning when it was used already: someone else may have
    /// read it first).
    fn redeem(&self, target: &str) -> Answer<'static> {
        let (_, qs) = target.split_once('?').unwrap_or((target, ""));
        let given = query(qs).get("once").copied().unwrap_or("");
        let mut once = self.once();
        match &once.nonce {
            Some((nonce, until)) if same(given, nonce) && Instant::now() <= *until => {
                let nonce = nonce.clone();
                once.used.push(nonce);
                once.nonce = None;
                let mut a = Answer::error(303, "to the page\n");
                a.extra = vec![
                    ("Location".into(), "/".into()),
                    (
                        "Set-Cookie".into(),
                        format!(
                            "{}={}; HttpOnly; SameSite=Strict; Path=/",
                            self.cookie, self.token
                        ),
                    ),
                ];
                a
            }
            _ if once.used.iter().any(|u| same(given, u)) => {
                eprintln!(
                    "plx: warning: the one-time address opened in the browser was used a second \
                     time; if the browser did not get the page, someone else used it first: \
                     restart plx view"
                );
                Answer::error(403, "forbidden: this one-time address was used already\n")
            }
            _ => Answer::error(
                403,
                "forbidden: this one-time address has expired or is not this server's; use the \
                 address plx view printed\n",
            ),
        }
    }

    /// The answer to `req` from `viewer`.
    pub fn answer<'v>(&self, viewer: &'v Viewer, req: &Request) -> Answer<'v> {
        if let Err(a) = self.place(req) {
            return a;
        }
        if req.method != "GET" {
            return Answer::error(405, "only GET\n");
        }
        let path = req.target.split('?').next().unwrap_or("");
        if path == "/open" {
            return self.redeem(&req.target);
        }
        match self.admitted(req) {
            Some(page_token) => route(viewer, page_token, &req.target),
            None => forbidden(),
        }
    }
}

impl Server {
    /// Binds `opts` and draws the token.
    pub fn bind(opts: &ServerOptions) -> Result<Server, ViewError> {
        let want = format!("{}:{}", opts.bind, opts.port);
        let bind = opts.bind.trim_start_matches('[').trim_end_matches(']');
        let listener = TcpListener::bind((bind, opts.port))
            .map_err(|e| ViewError::Bind(want.clone(), e.to_string()))?;
        let local = listener
            .local_addr()
            .map_err(|e| ViewError::Bind(want, e.to_string()))?;
        Ok(Server {
            listener,
            gate: Gate::new(random_token()?, &opts.bind, local.port()),
            addr: local.to_string(),
            limits: Limits::default(),
        })
    }

    /// The URL to open (with the token).
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.gate.token)
    }

    /// A one-time URL without the token, for a browser started with it on its command line
    /// (which every local user can read): used once within [`ONE_TIME`], it sets the token as
    /// an HttpOnly, SameSite=Strict cookie and sends the browser to the page.
    pub fn one_time_url(&mut self) -> Result<String, ViewError> {
        Ok(format!("http://{}{}", self.addr, self.gate.one_time()?))
    }

    /// The token.
    pub fn token(&self) -> &str {
        &self.gate.token
    }

    /// Serves requests until the process ends, several at once ([`Limits::answerers`]), the
    /// waits replayed on a thread of their own when first asked for
    /// ([`Viewer::replay_waits_when_asked`]).
    pub fn serve(self, viewer: &Viewer) {
        let Server {
            listener,
            gate,
            limits,
            ..
        } = self;
        std::thread::scope(|s| {
            let replay = std::thread::Builder::new()
                .name("plx-view-waits".into())
                .spawn_scoped(s, || viewer.replay_waits_when_asked());
            if replay.is_err() {
                // no thread for it: the waits are replayed by the answer that asks first
                viewer.stop_replay();
            }
            http::serve(listener, limits, |req| reply(gate.answer(viewer, req)));
            viewer.stop_replay();
        })
    }
}

fn reply(a: Answer) -> Reply {
    let mut headers: Vec<(String, String)> = [
        ("Content-Type", a.content_type),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        (
            "Content-Security-Policy",
            "default-src 'self'; style-src 'self' 'unsafe-inline'",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    headers.extend(a.extra);
    Reply {
        status: a.status,
        headers,
        body: a.body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_sent_with_encoded_commas_are_each_read() {
        assert_eq!(tracks_of("0%2C3%2c12"), vec![0, 3, 12]);
        assert_eq!(tracks_of("1,2"), vec![1, 2]);
        assert_eq!(tracks_of(""), Vec::<usize>::new());
    }

    #[test]
    fn query_values_are_percent_decoded() {
        assert_eq!(percent_decode("MPI%5FSend"), "MPI_Send");
        assert_eq!(percent_decode("ns%3A%3Af(int)+x"), "ns::f(int) x");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("caf%C3%A9"), "café");
    }

    fn req(target: &str, headers: &[(&str, &str)]) -> Request {
        Request {
            method: "GET".into(),
            target: target.into(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn only_this_servers_host_and_origin_pass() {
        let g = Gate::new("t".into(), "127.0.0.1", 4000);
        for ok in [
            "127.0.0.1:4000",
            "localhost:4000",
            "LocalHost:4000",
            "[::1]:4000",
        ] {
            assert!(g.place(&req("/", &[("host", ok)])).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example:4000",
            "127.0.0.1:4001",
            "127.0.0.1",
            "localhost.evil.example:4000",
            "10.0.0.1:4000",
            "",
        ] {
            assert_eq!(
                g.place(&req("/", &[("host", bad)])).err().unwrap().status,
                403,
                "{bad}"
            );
        }
        assert_eq!(g.place(&req("/", &[])).err().unwrap().status, 403);
        let two = [("host", "127.0.0.1:4000"), ("host", "127.0.0.1:4000")];
        assert_eq!(g.place(&req("/", &two)).err().unwrap().status, 400);
        let h = ("host", "127.0.0.1:4000");
        assert!(g
            .place(&req("/", &[h, ("origin", "http://127.0.0.1:4000")]))
            .is_ok());
        for bad in [
            "http://evil.example",
            "null",
            "http://localhost:4000",
            "https://127.0.0.1:4000",
        ] {
            let a = g.place(&req("/", &[h, ("origin", bad)])).err().unwrap();
            assert_eq!(a.status, 403, "{bad}");
        }
        // bound to every address: any IP address, still no other name
        let all = Gate::new("t".into(), "0.0.0.0", 4000);
        assert!(all
            .place(&req("/", &[("host", "192.168.1.7:4000")]))
            .is_ok());
        assert!(all
            .place(&req("/", &[("host", "evil.example:4000")]))
            .is_err());
    }

    #[test]
    fn the_one_time_path_sets_the_cookie_once() {
        let g = Gate::new("tok".into(), "127.0.0.1", 4000);
        let path = g.one_time().unwrap();
        assert!(!path.contains("tok"));
        let a = g.redeem(&path);
        assert_eq!(a.status, 303);
        assert_eq!(
            a.extra,
            vec![
                ("Location".to_string(), "/".to_string()),
                (
                    "Set-Cookie".to_string(),
                    "plx_view_4000=tok; HttpOnly; SameSite=Strict; Path=/".to_string()
                )
            ]
        );
        assert_eq!(g.redeem(&path).status, 403);
        let h = ("host", "127.0.0.1:4000");
        assert_eq!(
            g.admitted(&req(
                "/api/meta",
                &[h, ("cookie", "a=b; plx_view_4000=tok")]
            )),
            Some("")
        );
        assert_eq!(
            g.admitted(&req("/api/meta", &[h, ("cookie", "plx_view_4001=tok")])),
            None
        );
        assert_eq!(g.admitted(&req("/api/meta?token=tok", &[h])), Some("tok"));
        // expired
        let path = g.one_time().unwrap();
        g.once().nonce.as_mut().unwrap().1 = Instant::now() - Duration::from_secs(1);
        assert_eq!(g.redeem(&path).status, 403);
    }
}
