//! Progress of a long command: a bar on a terminal, elsewhere (logs, CI) a plain line every
//! few seconds.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// The progress of `command` over `total` items.
pub(super) struct Progress {
    command: &'static str,
    shown: Shown,
}

enum Shown {
    Bar(ProgressBar),
    Lines {
        total: u64,
        started: Instant,
        last: Instant,
        /// The count of the last line printed.
        shown_done: Option<u64>,
    },
}

impl Progress {
    /// Starts showing progress over `total` items called `items` (e.g. `reports`);
    /// `intro` ends the first plain line (e.g. `reports to make`).
    pub(super) fn new(command: &'static str, items: &str, intro: &str, total: u64) -> Self {
        let shown = if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{spinner}} [{{bar:40}}] {{pos}}/{{len}} {items} · {{msg}} · {{eta}} left"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            Shown::Bar(bar)
        } else {
            eprintln!("{command}: {total} {intro}");
            let now = Instant::now();
            Shown::Lines {
                total,
                started: now,
                last: now,
                shown_done: None,
            }
        };
        Progress { command, shown }
    }

    /// `done` items handled so far; `counts` says how they went (e.g. `3 made, 1 failed`).
    pub(super) fn update(&mut self, done: u64, counts: &str) {
        let command = self.command;
        match &mut self.shown {
            Shown::Bar(bar) => {
                // Items added during the run may make it longer than counted.
                if done > bar.length().unwrap_or(0) {
                    bar.set_length(done);
                }
                bar.set_position(done);
                let rate = done as f64 / bar.elapsed().as_secs_f64().max(0.001);
                bar.set_message(format!("{rate:.0}/s · {counts}"));
            }
            Shown::Lines {
                total,
                started,
                last,
                shown_done,
            } => {
                // Every two seconds, and once when all are done: updates about other work
                // (notifications) after the last item repeat nothing.
                let changed = *shown_done != Some(done);
                let finished = done == *total;
                if changed && (last.elapsed() >= Duration::from_secs(2) || finished) {
                    *last = Instant::now();
                    *shown_done = Some(done);
                    let total = (*total).max(done);
                    eprintln!(
                        "{command}: {done}/{total} ({}%) after {:.1} s: {counts}",
                        done * 100 / total.max(1),
                        started.elapsed().as_secs_f64(),
                    );
                }
            }
        }
    }

    /// Clears the bar.
    pub(super) fn finish(self) {
        if let Shown::Bar(bar) = self.shown {
            bar.finish_and_clear();
        }
    }
}
