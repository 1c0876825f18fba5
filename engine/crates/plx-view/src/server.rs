//! The local HTTP server: every request must carry the token drawn at start (`?token=`), else
//! 403; it answers only the embedded page and bundle and the JSON API, never a file from disk.

use std::collections::HashMap;
use std::io::Cursor;

use serde_json::Value;
use tiny_http::{Header, Response, StatusCode};

use crate::api::Viewer;
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

/// A bound server and its token.
pub struct Server {
    http: tiny_http::Server,
    token: String,
    /// The address it listens on, `host:port`.
    pub addr: String,
}

/// 16 random bytes from the OS, in hex.
pub fn random_token() -> Result<String, ViewError> {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b).map_err(|e| ViewError::Random(e.to_string()))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// An answer: status, content type, body.
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Content type.
    pub content_type: &'static str,
    /// Body.
    pub body: Vec<u8>,
}

impl Answer {
    fn json(v: Value) -> Answer {
        Answer {
            status: 200,
            content_type: "application/json",
            body: v.to_string().into_bytes(),
        }
    }

    fn error(status: u16, msg: &str) -> Answer {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: msg.as_bytes().to_vec(),
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

fn query(s: &str) -> HashMap<&str, &str> {
    s.split('&')
        .filter_map(|kv| kv.split_once('=').or(Some((kv, ""))))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// Answers `GET url` for `viewer` with `token` required.
pub fn handle(viewer: &Viewer, token: &str, method: &str, url: &str) -> Answer {
    let (path, qs) = url.split_once('?').unwrap_or((url, ""));
    let q = query(qs);
    if !q.get("token").is_some_and(|t| same(t, token)) {
        return Answer::error(
            403,
            "forbidden: this address needs the token plx view printed\n",
        );
    }
    if method != "GET" {
        return Answer::error(405, "only GET\n");
    }
    let num = |k: &str, d: i64| -> i64 { q.get(k).and_then(|v| v.parse().ok()).unwrap_or(d) };
    match path {
        "/" | "/index.html" => Answer {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: PAGE.replace("__TOKEN__", token).into_bytes(),
        },
        "/viewer.js" => match bundle() {
            Some(b) => Answer {
                status: 200,
                content_type: "text/javascript; charset=utf-8",
                body: b.to_vec(),
            },
            None => Answer::error(404, "this plx was built without the viewer's bundle\n"),
        },
        "/api/meta" => Answer::json(viewer.meta()),
        "/api/window" => {
            let span = viewer.index.end - viewer.index.origin;
            Answer {
                status: 200,
                content_type: "application/json",
                body: viewer
                    .window(
                        num("t0", 0),
                        num("t1", span.max(1)),
                        num("width", 1000).clamp(1, 20_000) as u32,
                        num("max", 5000).clamp(0, 1_000_000) as usize,
                    )
                    .into_bytes(),
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
        "/api/stats" => {
            let span = viewer.index.end - viewer.index.origin;
            Answer::json(viewer.stats(num("t0", 0), num("t1", span.max(1))))
        }
        "/api/profile" => Answer::json(viewer.profile()),
        "/api/comm" => Answer::json(viewer.comm()),
        "/api/critpath" => Answer::json(viewer.critpath()),
        "/api/compare" => Answer::json(viewer.compare()),
        "/api/displays" => Answer::json(viewer.displays(num("bins", 200).max(1) as usize)),
        _ => Answer::error(404, "not found\n"),
    }
}

impl Server {
    /// Binds `opts` and draws the token.
    pub fn bind(opts: &ServerOptions) -> Result<Server, ViewError> {
        let addr = format!("{}:{}", opts.bind, opts.port);
        let http = tiny_http::Server::http(&addr)
            .map_err(|e| ViewError::Bind(addr.clone(), e.to_string()))?;
        let addr = match http.server_addr() {
            tiny_http::ListenAddr::IP(a) => a.to_string(),
            #[allow(unreachable_patterns)]
            _ => addr,
        };
        Ok(Server {
            http,
            token: random_token()?,
            addr,
        })
    }

    /// The URL to open (with the token).
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token)
    }

    /// The token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Serves requests one after the other until the process ends.
    pub fn serve(&self, viewer: &Viewer) {
        for req in self.http.incoming_requests() {
            let a = handle(viewer, &self.token, req.method().as_str(), req.url());
            let headers = [
                ("Content-Type", a.content_type),
                ("Cache-Control", "no-store"),
                ("X-Content-Type-Options", "nosniff"),
                ("Referrer-Policy", "no-referrer"),
                (
                    "Content-Security-Policy",
                    "default-src 'self'; style-src 'self' 'unsafe-inline'",
                ),
            ];
            let mut resp = Response::new(
                StatusCode(a.status),
                Vec::new(),
                Cursor::new(a.body.clone()),
                Some(a.body.len()),
                None,
            );
            for (k, v) in headers {
                if let Ok(h) = Header::from_bytes(k.as_bytes(), v.as_bytes()) {
                    resp.add_header(h);
                }
            }
            // a browser that went away is no error of the server's
            let _ = req.respond(resp);
        }
    }
}
