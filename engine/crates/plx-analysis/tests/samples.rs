//! Call-stack samples (SampleTree, record 80) folded into the callpath tree, on synthetic
//! experiments (1 tick = 1 ns, a sample = 1 ms of CPU time, exact numbers).

use plx_analysis::{callpath_rows, flat_profile, BuildOptions, Model};
use plx_format::records::{Module, Record, SampleTree, SampleTreeFramesItem};
use plx_format::synth::SynthProcess;
use plx_format::test_dir::tmp;
use plx_format::NONE_U32;

const MS: u64 = 1_000_000;

fn frame(parent: u32, node: u32, module: u32, address: u64, samples: u64) -> SampleTreeFramesItem {
    SampleTreeFramesItem {
        parent,
        node,
        module,
        address,
        samples,
    }
}

/// main (region 1, 1 s, 400 ms exclusive) → solve (region 2, 600 ms); samples: 100 in solve's
/// own code, under solve a frame of libouter (30 own) calling libinner (200), and 50 at the
/// thread's root in libouter (no instrumented call open).
fn experiment(frames: Vec<SampleTreeFramesItem>, samples: u64) -> Model {
    let d = tmp("samples");
    let mut p = SynthProcess::new("node1", 100, &["app"]);
    p.functions(&[(1, "main"), (2, "solve")])
        .thread(0, 1000, "main", 0)
        .record(Record::Module(Module {
            module_id: 0,
            base: 0x1000,
            path: "/nonexistent/libouter.so".into(),
            build_id: String::new(),
        }))
        .record(Record::Module(Module {
            module_id: 1,
            base: 0x9000,
            path: "/nonexistent/libinner.so".into(),
            build_id: String::new(),
        }))
        .profile(
            0,
            1_000 * MS,
            1_000 * MS,
            &[
                (None, 1, 1, 1, 1_000 * MS, 400 * MS),
                (Some(0), 2, 1, 0, 600 * MS, 600 * MS),
            ],
        )
        .record(Record::SampleTree(SampleTree {
            thread: 0,
            period_ns: MS,
            samples,
            lost_full: 3,
            lost_loader: 2,
            frames,
        }));
    p.end(1_000 * MS, 0);
    p.write(&d).unwrap();
    Model::open(&d, BuildOptions::default()).unwrap()
}

fn frames() -> Vec<SampleTreeFramesItem> {
    vec![
        frame(NONE_U32, 1, NONE_U32, 0, 100),     // solve's own code
        frame(NONE_U32, 1, 0, 0x1100, 30),        // libouter under solve
        frame(1, NONE_U32, 1, 0x9100, 150),       // libinner called by it
        frame(1, NONE_U32, 1, 0x9180, 50),        // another address in libinner: the same node
        frame(NONE_U32, NONE_U32, 0, 0x1200, 50), // libouter at the thread's root
    ]
}

#[test]
fn sampled_frames_hang_under_the_instrumented_node_with_estimated_times() {
    let m = experiment(frames(), 380);
    let t = &m.processes[0].threads[0];
    let s = t.samples.expect("sample counts");
    assert_eq!(
        (s.period_ns, s.samples, s.lost_full, s.lost_loader),
        (MS, 380, 3, 2)
    );
    let tree = &t.tree;
    let by_path = |names: &[&str]| {
        let rows = callpath_rows(tree);
        rows.into_iter()
            .find(|r| {
                let p: Vec<&str> = tree
                    .path(r.node)
                    .iter()
                    .map(|&g| m.regions.name(g))
                    .collect();
                p == names
            })
            .unwrap_or_else(|| panic!("no callpath {names:?}"))
    };
    let solve = by_path(&["main", "solve"]);
    // measured: its counts stay, its exclusive time gives the sampled callees' 230 ms
    assert_eq!(
        (solve.calls, solve.samples, solve.estimated),
        (1, 330, false)
    );
    assert!((solve.inclusive - 0.600).abs() < 1e-9);
    assert!(
        (solve.exclusive - 0.370).abs() < 1e-9,
        "{}",
        solve.exclusive
    );
    let main = by_path(&["main"]);
    assert_eq!((main.calls, main.samples, main.estimated), (1, 330, false));
    assert!((main.exclusive - 0.400).abs() < 1e-9);
    let outer = by_path(&["main", "solve", "[libouter.so]"]);
    assert_eq!(
        (outer.calls, outer.samples, outer.estimated),
        (0, 230, true)
    );
    assert!((outer.inclusive - 0.230).abs() < 1e-9 && (outer.exclusive - 0.030).abs() < 1e-9);
    let inner = by_path(&["main", "solve", "[libouter.so]", "[libinner.so]"]);
    assert_eq!(
        (inner.calls, inner.samples, inner.estimated),
        (0, 200, true)
    );
    assert!((inner.inclusive - 0.200).abs() < 1e-9 && (inner.exclusive - 0.200).abs() < 1e-9);
    let root = by_path(&["[libouter.so]"]);
    assert_eq!((root.samples, root.estimated), (50, true));
    assert!((root.inclusive - 0.050).abs() < 1e-9);
    // the flat profile: libouter's two callpaths, neither inside the other
    let flat = flat_profile(tree);
    let outer_flat = flat
        .iter()
        .find(|r| m.regions.name(r.region) == "[libouter.so]")
        .unwrap();
    assert_eq!(
        (outer_flat.calls, outer_flat.samples, outer_flat.estimated),
        (0, 280, true)
    );
    assert!((outer_flat.inclusive - 0.280).abs() < 1e-9);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}

#[test]
fn frames_naming_missing_parents_or_nodes_are_left_out_with_a_warning() {
    let mut f = frames();
    f.push(frame(9, NONE_U32, 0, 0x1300, 7)); // parent after it
    f.push(frame(NONE_U32, 5, 0, 0x1300, 7)); // no node 5 in the ThreadProfile
    let m = experiment(f, 394);
    let tree = &m.processes[0].threads[0].tree;
    // the frames left out add nothing: the roots hold the 380 samples of the good frames
    let roots: u64 = tree
        .nodes()
        .iter()
        .filter(|n| n.parent.is_none())
        .map(|n| n.samples)
        .sum();
    assert_eq!(roots, 380);
    let w: Vec<&str> = m.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        w.iter().any(|x| x.contains(
            "thread 0: 2 sampled frames name a frame or profile node that does not exist: left out"
        )),
        "{w:?}"
    );
}
