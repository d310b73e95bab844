//! `pallas-diff dashboard` on the built binary: a small fault-injected campaign, a second shard
//! merged with it, and a fault hunt rendered into one page, which a real headless browser
//! (Debian's `chromium`) opens: the page must report no script error and every chart drawn
//! (`#dashboard-status`, which the page's script fills). Without chromium the browser part is
//! skipped with the reason printed. Bad inputs exit 2 naming the file; a shard merged without
//! its `stats.json` is named by the merge (stderr) and by the page.

mod common;
use common::run_in;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    common::scratch("dashboard", name)
}

/// The browser: `$PALLAS_DIFF_CHROMIUM`, else `chromium` on the PATH.
fn chromium() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("PALLAS_DIFF_CHROMIUM") {
        return Ok(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            "no chromium on the PATH (ci/test.sh installs Debian's `chromium` as root; or set PALLAS_DIFF_CHROMIUM)".to_string()
        })
}

/// The page's DOM after its scripts ran (`--dump-dom`; the virtual time budget lets the page's
/// timers run first), killed after 60 s. The DOM goes to a file: a pipe nobody reads while
/// waiting would fill and stall the browser.
fn dump_dom(browser: &Path, page: &Path, profile: &Path) -> String {
    let url = format!("file://{}", std::fs::canonicalize(page).unwrap().display());
    let dom = page.with_extension("dom.html");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(&url)
        .stdout(std::fs::File::create(&dom).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 60 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "chromium failed on {url}: {status}");
    std::fs::read_to_string(&dom).unwrap()
}

/// What the page's script wrote into `#dashboard-status`: (data-state, the JSON).
fn status(dom: &str) -> (String, serde_json::Value) {
    let start = dom
        .find("<pre id=\"dashboard-status\"")
        .unwrap_or_else(|| panic!("no status element in the DOM:\n{dom}"));
    let tag_end = start + dom[start..].find('>').unwrap();
    let tag = &dom[start..tag_end];
    let state = tag
        .split("data-state=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or("")
        .to_string();
    let end = tag_end + dom[tag_end..].find("</pre>").unwrap();
    let text = dom[tag_end + 1..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let json = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the status is not JSON ({e}): {text:?} (state {state})"));
    (state, json)
}

/// The ids of the chart containers of a page.
fn chart_ids(html: &str) -> Vec<String> {
    html.split("<div class=\"chart\" id=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().to_string())
        .collect()
}

#[test]
fn a_campaign_merge_and_hunt_render_in_a_real_browser() {
    let t = scratch("page");
    for (out, seed) in [("f", "0"), ("g", "1")] {
        let r = run_in(
            &t,
            &[
                "fuzz",
                "--engines",
                "oracle,pallas-sim",
                "--cases",
                "300",
                "--seed",
                seed,
                "--inject",
                "d12-tail-clamped-before-mask",
                "--out",
                out,
            ],
        );
        assert_eq!(r.code, 3, "the injected fault gives a finding: {r:?}");
    }
    let r = run_in(&t, &["merge", "f", "g", "--out", "m"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = run_in(
        &t,
        &[
            "hunt",
            "--inject",
            "d12-tail-clamped-before-mask",
            "--repeat",
            "1",
            "--cases",
            "5000",
            "--reduce-time",
            "2s",
            "--out",
            "h",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let r = run_in(&t, &["dashboard", "f", "m", "h", "-o", "pages/report.html"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains("2 findings directories") && r.stdout.contains("1 hunt(s)"),
        "{r:?}"
    );
    let page = t.join("pages/report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    let charts = chart_ids(&html);
    assert_eq!(charts.len(), 6, "three charts per findings directory");
    assert!(
        html.contains("d12-tail-clamped-before-mask"),
        "the hunt's row"
    );
    assert!(
        html.contains("href=\"..&#x2f;f&#x2f;0001-"),
        "findings are linked relative to the page"
    );

    let browser = match chromium() {
        Ok(b) => b,
        Err(why) => {
            eprintln!("skip the browser check: {why}");
            return;
        }
    };
    let (state, json) = status(&dump_dom(&browser, &page, &t.join("profile")));
    assert_eq!(
        json["errors"],
        serde_json::json!([]),
        "script errors: {json}"
    );
    for id in &charts {
        let c = &json["charts"][id];
        assert!(
            c["width"].as_u64() > Some(0) && c["painted"].as_u64() > Some(0),
            "chart {id} did not draw: {json}"
        );
    }
    assert_eq!(state, "ok", "{json}");
    // The check sees errors: the same page with a script that throws reports it.
    let broken = t.join("pages/broken.html");
    std::fs::write(
        &broken,
        html.replace(
            "</body>",
            "<script>throw new Error('planted error')</script></body>",
        ),
    )
    .unwrap();
    let (state, json) = status(&dump_dom(&browser, &broken, &t.join("profile")));
    assert_eq!(state, "failed", "{json}");
    assert!(
        json["errors"].to_string().contains("planted error"),
        "{json}"
    );
}

#[test]
fn bad_inputs_exit_2_naming_the_file() {
    let t = scratch("bad");
    let r = run_in(&t, &["dashboard", "absent", "-o", "r.html"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("absent: no such directory"), "{r:?}");
    std::fs::create_dir(t.join("plain")).unwrap();
    let r = run_in(&t, &["dashboard", "plain", "-o", "r.html"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("neither a findings directory"), "{r:?}");
    std::fs::create_dir(t.join("f")).unwrap();
    std::fs::write(t.join("f/stats.json"), "{\"format\": 1, \"series\": 5}").unwrap();
    let r = run_in(&t, &["dashboard", "f", "-o", "r.html"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("f/stats.json") && r.stderr.contains("not a campaign record"),
        "{r:?}"
    );
    assert!(
        !t.join("r.html").exists(),
        "nothing is written on a refusal"
    );
}

#[test]
fn a_shard_without_its_record_is_named_by_the_merge_and_the_page() {
    let t = scratch("missing");
    for (out, seed) in [("f", "0"), ("g", "1")] {
        let r = run_in(
            &t,
            &[
                "fuzz",
                "--engines",
                "oracle,pallas-sim",
                "--cases",
                "50",
                "--seed",
                seed,
                "--out",
                out,
            ],
        );
        assert!(r.code == 0 || r.code == 3, "{r:?}");
    }
    std::fs::remove_file(t.join("g/stats.json")).unwrap();
    let r = run_in(&t, &["merge", "f", "g", "--out", "m"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr
            .contains("warning: shard seed-1 (g) has no stats.json"),
        "{r:?}"
    );
    assert!(r.stdout.contains("without a record: seed-1"), "{r:?}");
    let r = run_in(&t, &["dashboard", "m", "-o", "r.html"]);
    assert_eq!(r.code, 0, "{r:?}");
    let html = std::fs::read_to_string(t.join("r.html")).unwrap();
    assert!(
        html.contains(
            "shards without a campaign record, not counted in the summary and charts: seed-1"
        ),
        "the page says so"
    );
}
