//! Embeds the viewer's bundle (viewer/dist/viewer.js, built by `make`: npm ci then esbuild) or,
//! with PLX_VIEWER_BUNDLE=PATH, a prebuilt one. Without a bundle the crate still builds and
//! `plx view` refuses to start, saying how to build it.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let default = manifest.join("../../../viewer/dist/viewer.js");
    println!("cargo:rerun-if-env-changed=PLX_VIEWER_BUNDLE");
    let path = std::env::var_os("PLX_VIEWER_BUNDLE")
        .map(PathBuf::from)
        .unwrap_or(default);
    println!("cargo:rerun-if-changed={}", path.display());
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("bundle.rs");
    let code = match path.canonicalize() {
        Ok(p) if p.is_file() => format!(
            "/// The viewer's bundle.\npub const BUNDLE: Option<&[u8]> = Some(include_bytes!({:?}));\n",
            p.display().to_string()
        ),
        _ => {
            println!(
                "cargo:warning=no viewer bundle at {}: `plx view` will refuse to start; build it with `make` (npm ci and esbuild in viewer/) or set PLX_VIEWER_BUNDLE",
                path.display()
            );
            "/// The viewer's bundle (none was built).\npub const BUNDLE: Option<&[u8]> = None;\n"
                .to_string()
        }
    };
    std::fs::write(&out, code).expect("OUT_DIR is writable");
}
