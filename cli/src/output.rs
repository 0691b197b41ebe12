//! What the answering commands print and how: `--format text|json` and the JSON document
//! (docs/json.md holds the schemas), and the progress line on stderr.
//!
//! A command that offers JSON flattens [`FormatArgs`], builds its text or its document from the
//! same result (so their figures agree), and emits the document with [`write_json`]: one
//! pretty-printed JSON object on stdout whose first field is `schema`, `hashroute.NAME/VERSION`.
//! The version changes only when a field is removed or changes meaning (adding a field keeps
//! it). Errors stay the one stderr line of `main`, in either format.

use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::failure::Failure;

/// How a command prints its answer.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// For people: the answer first, then the details.
    #[default]
    Text,
    /// One JSON document on stdout with a versioned `schema` field (see docs/json.md).
    Json,
}

/// The `--format` flag, for a command to flatten.
#[derive(Args, Debug, Clone, Copy)]
pub(crate) struct FormatArgs {
    /// Output format: text for people, or one JSON document (field `schema` names its version)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Text, help_heading = "Output")]
    pub(crate) format: Format,
}

impl FormatArgs {
    /// Whether the document is JSON.
    pub(crate) fn json(self) -> bool {
        self.format == Format::Json
    }
}

/// A JSON document: the schema name first, then the command's fields.
#[derive(Serialize)]
struct Document<'a, T: Serialize> {
    schema: &'a str,
    #[serde(flatten)]
    body: &'a T,
}

/// Writes `body` as one JSON object to `out`, `schema` first, followed by a newline.
/// Non-finite floats (never produced on purpose) become `null`, as serde_json writes them.
pub(crate) fn write_json<T: Serialize>(out: &mut impl Write, schema: &str, body: &T) -> Result<(), Failure> {
    serde_json::to_writer_pretty(&mut *out, &Document { schema, body }).map_err(|e| match e.io_error_kind() {
        Some(kind) => Failure::from(io::Error::from(kind)),
        None => Failure::context("writing JSON", e),
    })?;
    writeln!(out)?;
    Ok(())
}

/// Writes `body` as the JSON document on stdout.
pub(crate) fn print_json<T: Serialize>(schema: &str, body: &T) -> Result<(), Failure> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    write_json(&mut out, schema, body)?;
    out.flush()?;
    Ok(())
}

/// A progress line on stderr: a spinner with the step and the elapsed time, drawn only when
/// stderr is a terminal and the output is text; otherwise every call does nothing (pipes, logs
/// and `--format json` get no extra bytes). Cleared when dropped.
pub(crate) struct Progress(Option<ProgressBar>);

impl Progress {
    /// Starts the line with `message` when `format` is text and stderr a terminal.
    pub(crate) fn start(format: Format, message: &str) -> Progress {
        if format != Format::Text || !io::stderr().is_terminal() {
            return Progress(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(style("{spinner} [{elapsed}] {wide_msg}"));
        bar.set_message(message.to_owned());
        bar.enable_steady_tick(Duration::from_millis(120));
        Progress(Some(bar))
    }

    /// Says what runs now: step `done` of `total`.
    pub(crate) fn step(&self, done: usize, total: usize, message: &str) {
        if let Some(bar) = &self.0 {
            if bar.length().is_none() {
                bar.set_style(style("{spinner} [{elapsed}] {pos}/{len} {wide_msg}"));
            }
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(message.to_owned());
        }
    }
}

/// A style from a template known to be valid (the default spinner should it not be).
fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner())
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_start_with_their_schema() {
        #[derive(Serialize)]
        struct Body {
            a: u32,
            b: Option<f64>,
        }
        let mut out = Vec::new();
        write_json(&mut out, "hashroute.test/1", &Body { a: 1, b: None }).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("{\n  \"schema\": \"hashroute.test/1\",\n  \"a\": 1"), "{text}");
        assert!(text.ends_with("}\n"));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(v["b"].is_null());
    }
}
