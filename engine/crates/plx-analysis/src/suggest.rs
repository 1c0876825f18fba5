//! "Did you mean": the known names near a mistyped one, for every error that names an unknown
//! function, counter or probe glob.

/// The edit distance (insertions, deletions, substitutions and swaps of two neighbours) of `a`
/// and `b`, or `None` when it exceeds `max`.
fn distance(a: &[char], b: &[char], max: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let mut rows = vec![vec![0usize; b.len() + 1]; 3];
    for (j, cell) in rows[1].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        let (cur, prev, prev2) = (i % 3, (i + 2) % 3, (i + 1) % 3);
        rows[cur][0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[prev][j] + 1)
                .min(rows[cur][j - 1] + 1)
                .min(rows[prev][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[prev2][j - 2] + 1);
            }
            rows[cur][j] = d;
        }
        if rows[cur].iter().min().is_some_and(|&m| m > max) {
            return None;
        }
    }
    Some(rows[a.len() % 3][b.len()]).filter(|&d| d <= max)
}

/// The names of `known` near `name`: the nearest of those within a few typing errors of it
/// (one per five characters, at most three; case ignored), then those that contain it.
/// Each once, `name` itself never.
pub fn near<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let lower: Vec<char> = name.to_lowercase().chars().collect();
    let max = (1 + lower.len() / 5).min(3);
    let mut close: Vec<(usize, &str)> = Vec::new();
    let mut containing: Vec<&str> = Vec::new();
    for k in known {
        if k == name {
            continue;
        }
        let kl: Vec<char> = k.to_lowercase().chars().collect();
        if let Some(d) = distance(&lower, &kl, max) {
            close.push((d, k));
        } else if !name.is_empty() && k.contains(name) {
            containing.push(k);
        }
    }
    close.sort_unstable();
    let best = close.first().map_or(0, |c| c.0);
    containing.sort_unstable();
    let mut out: Vec<&str> = close
        .into_iter()
        .take_while(|c| c.0 == best)
        .map(|(_, k)| k)
        .collect();
    out.extend(containing);
    let mut seen = std::collections::HashSet::new();
    out.retain(|k| seen.insert(*k));
    out
}

/// ` (did you mean A?)`, ` (did you mean A or B?)`, ` (did you mean one of A, B, ...?)` for
/// more than `most`, or nothing when no name is near.
pub fn did_you_mean(near: &[&str], most: usize) -> String {
    match near {
        [] => String::new(),
        [a] => format!(" (did you mean {a}?)"),
        [a, b] => format!(" (did you mean {a} or {b}?)"),
        _ if near.len() > most => {
            format!(" (did you mean one of {}, ...?)", near[..most].join(", "))
        }
        _ => format!(" (did you mean one of {}?)", near.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_are_near() {
        let known = [
            "cycles",
            "cpu-cycles",
            "instructions",
            "cache-misses",
            "task-clock",
        ];
        assert_eq!(near("cycels", known), vec!["cycles"]);
        assert_eq!(near("instrutions", known), vec!["instructions"]);
        assert_eq!(near("Task-Clock", known), vec!["task-clock"]);
        assert_eq!(near("flops", known), Vec::<&str>::new());
        // containing it, after the close ones
        assert_eq!(near("cycle", known), vec!["cycles", "cpu-cycles"]);
        let fns = ["foo", "solve", "solver_step", "main"];
        assert_eq!(near("fo", fns), vec!["foo"]);
        assert_eq!(near("sovle", fns), vec!["solve"]);
        assert_eq!(near("solve", fns), vec!["solver_step"]);
    }

    #[test]
    fn messages() {
        assert_eq!(did_you_mean(&[], 10), "");
        assert_eq!(did_you_mean(&["a"], 10), " (did you mean a?)");
        assert_eq!(did_you_mean(&["a", "b"], 10), " (did you mean a or b?)");
        assert_eq!(
            did_you_mean(&["a", "b", "c"], 10),
            " (did you mean one of a, b, c?)"
        );
        assert_eq!(
            did_you_mean(&["a", "b", "c"], 2),
            " (did you mean one of a, b, ...?)"
        );
    }
}
