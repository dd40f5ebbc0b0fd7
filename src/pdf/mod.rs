//! PDF reports, typeset in-process with typst.
//!
//! A report is a typst template compiled into the binary plus one JSON
//! document of already translated and formatted strings. The template reads
//! that document with `json("/data.json")`, so user-provided text is data and
//! never markup: a patient called `#eval("…")` is printed, not run.
//!
//! [`Engine`] holds what is expensive to build (the parsed fonts and typst's
//! standard library) and is meant to be created once and shared. Each call to
//! [`Engine::render`] compiles in a fresh, sealed world that sees only the
//! template, its data and the embedded fonts, so identical inputs give
//! byte-identical PDFs. Rendering is synchronous and CPU-bound: callers on an
//! async runtime should run it on a blocking thread.
//!
//! Every PDF declares and meets PDF/A-3b (archival: fonts embedded, an sRGB
//! output intent, XMP metadata, a document date, no encryption) and PDF/UA-1
//! (accessible: tagged, titled, images with alternative text); typst checks
//! both while exporting and refuses a document that misses either
//! ([`STANDARDS`]).

mod fonts;
mod world;

use std::fmt;
use std::sync::LazyLock;

use chrono::{DateTime, Datelike, Timelike, Utc};
use sha2::{Digest, Sha256};
use typst::diag::{SourceDiagnostic, Warned};
use typst::foundations::{Datetime, Smart};
use typst::syntax::Source;
use typst::text::{Lang, Locale};
use typst::utils::LazyHash;
use typst::{Library, LibraryExt};
use typst_layout::PagedDocument;
use typst_pdf::{PdfOptions, PdfStandard, PdfStandards, Timestamp};

use self::world::{RenderWorld, Shared};

/// The report layouts the engine can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Template {
    /// The report of a single measurement: patient, result, review, tachogram
    /// or pulse signal, risk factors.
    Measurement,
    /// The report of a period: counts per result, heart-rate statistics and
    /// chart, time of day, symptoms, signal quality and every measurement.
    Periodic,
}

/// Modules the templates import: `(path, source)`. None reads a report's own data, so
/// typst keeps each one's evaluation from one report to the next ([`TemplateData`]).
const MODULES: [(&str, &str); 2] = [
    (
        "/common.typ",
        include_str!("../../templates/pdf/common.typ"),
    ),
    (
        "/charts.typ",
        include_str!("../../templates/pdf/charts.typ"),
    ),
];

impl Template {
    /// Every template, in the order their sources enter [`revision`].
    const ALL: [Template; 2] = [Template::Measurement, Template::Periodic];

    /// The template's path inside the virtual project, which is also the name
    /// typst diagnostics refer to.
    fn path(self) -> &'static str {
        match self {
            Template::Measurement => "/measurement.typ",
            Template::Periodic => "/periodic.typ",
        }
    }

    /// The template's short name, for metrics and logs.
    pub fn name(self) -> &'static str {
        match self {
            Template::Measurement => "measurement",
            Template::Periodic => "periodic",
        }
    }

    fn text(self) -> &'static str {
        match self {
            Template::Measurement => include_str!("../../templates/pdf/measurement.typ"),
            Template::Periodic => include_str!("../../templates/pdf/periodic.typ"),
        }
    }
}

/// The standards every report declares and meets, as the cache key names them: a PDF made
/// before them (or to others) is never served as one made to them.
pub const STANDARDS: &str = "PDF/A-3b+PDF/UA-1";

/// What [`STANDARDS`] names, as typst's export takes it.
const PDF_STANDARDS: [PdfStandard; 2] = [PdfStandard::A_3b, PdfStandard::Ua_1];

/// What a template is given. The whole is served to it as `/data.json`; its
/// [`page`](TemplateData::page), the part every report of the template in one language
/// shares (the language, its direction and the labels), again as `/page.json`.
/// The modules (`common.typ`, `charts.typ`) read only the page, so typst's caches keep
/// their evaluation, and every function they define, from one report to the next in the
/// same language.
pub trait TemplateData: serde::Serialize {
    /// The part served as `/page.json`.
    fn page(&self) -> &impl serde::Serialize;
}

/// A JSON tree is its own page, with the page's fields among the rest: data built by hand
/// (tests, benches) renders without being split.
impl TemplateData for serde_json::Value {
    fn page(&self) -> &impl serde::Serialize {
        self
    }
}

/// Document-level facts that are not part of the template's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderMeta {
    /// The PDF's title, shown by viewers in the window title.
    pub title: String,
    /// A stable identifier of the document, e.g. a hash of what it shows; the
    /// PDF's `/ID` is derived from it instead of from the content or the clock.
    pub ident: String,
    /// The PDF's creation date; also what `datetime.today()` returns in the
    /// template. Taken from the data so that re-rendering changes nothing.
    pub timestamp: DateTime<Utc>,
    /// The document language as an ISO 639-1 code (`"de"`, `"ar"`, `"zh"`, …).
    pub language: String,
}

/// Why a report could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The template did not compile with the given data, typically because
    /// the data does not follow the template's contract.
    #[error("template failed: {0}")]
    Template(String),
    /// The laid-out document could not be written as PDF.
    #[error("pdf export failed: {0}")]
    Export(String),
}

/// Typesets reports. Build it once with [`Engine::new`] and share it (it is
/// `Send + Sync`, e.g. behind an `Arc`); every render reuses its fonts and
/// standard library.
pub struct Engine {
    shared: Shared,
    /// Parsed once, so each render only clones a reference-counted tree.
    sources: Vec<(Template, Source)>,
    modules: Vec<Source>,
}

impl Engine {
    /// Parses the embedded fonts and templates and builds typst's standard
    /// library. Cheap enough for start-up (a few milliseconds), too costly to
    /// repeat per report.
    pub fn new() -> Engine {
        let (book, fonts) = fonts::load();
        let sources = Template::ALL
            .iter()
            .map(|&template| {
                let id = world::project_file(template.path());
                (template, Source::new(id, template.text().to_owned()))
            })
            .collect();
        let modules = MODULES
            .iter()
            .map(|(path, text)| Source::new(world::project_file(path), (*text).to_owned()))
            .collect();
        Engine {
            modules,
            shared: Shared {
                library: LazyHash::new(Library::default()),
                book: LazyHash::new(book),
                fonts,
            },
            sources,
        }
    }

    /// Renders `template` with `data`, served to it as JSON at `/data.json` and
    /// `/page.json`, into PDF bytes. Deterministic: the same arguments give the same bytes.
    pub fn render(
        &self,
        template: Template,
        data: &impl TemplateData,
        meta: &RenderMeta,
    ) -> Result<Vec<u8>, RenderError> {
        // typst memoises across compilations in process-wide caches; without
        // trimming them after each render a long-running server keeps growing.
        let _evict = EvictOnDrop;
        let Warned { output, .. } = self.compile(template, data, meta);
        let document = output?;
        // The list is fixed and valid, but typst checks it at run time; its error is a
        // `HintedString`, which is no `std::error::Error`.
        let standards = PdfStandards::new(&PDF_STANDARDS)
            .map_err(|error| RenderError::Export(error.message().to_string()))?;
        let options = PdfOptions {
            ident: Smart::Custom(meta.ident.clone()),
            // PDF/A requires a document date: the data's, so re-rendering changes nothing.
            timestamp: pdf_timestamp(meta.timestamp),
            standards,
            ..PdfOptions::default()
        };
        typst_pdf::pdf(&document, &options).map_err(|errors| RenderError::Export(describe(&errors)))
    }

    /// Compiles without exporting, returning typst's warnings alongside.
    pub(crate) fn compile(
        &self,
        template: Template,
        data: &impl TemplateData,
        meta: &RenderMeta,
    ) -> Warned<Result<PagedDocument, RenderError>> {
        let main = self
            .sources
            .iter()
            .find(|(candidate, _)| *candidate == template)
            .map(|(_, source)| source.clone())
            .expect("every template is parsed in Engine::new");
        let json =
            serde_json::to_vec(data.page()).and_then(|page| Ok((page, serde_json::to_vec(data)?)));
        let (page, data) = match json {
            Ok(json) => json,
            Err(err) => {
                return Warned {
                    output: Err(RenderError::Template(format!("data: {err}"))),
                    warnings: Default::default(),
                };
            }
        };
        let world = RenderWorld::new(
            &self.shared,
            main,
            &self.modules,
            (page, data),
            meta.timestamp,
        );
        let Warned { output, warnings } = typst::compile::<PagedDocument>(&world);
        let output = output
            .map(|mut document| {
                let info = document.info_mut();
                info.title = Some(meta.title.as_str().into());
                if let Ok(lang) = meta.language.parse::<Lang>() {
                    info.locale = Smart::Custom(Locale::new(lang, None));
                }
                document
            })
            .map_err(|errors| RenderError::Template(describe(&errors)));
        Warned { output, warnings }
    }
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("fonts", &self.shared.fonts.len())
            .field("templates", &self.sources.len())
            .finish()
    }
}

/// The template revision: hex SHA-256 over every template's and module's path and source.
/// Part of report cache keys, so a changed template invalidates old PDFs.
pub fn revision() -> &'static str {
    static REVISION: LazyLock<String> = LazyLock::new(|| {
        let mut hasher = Sha256::new();
        let templates = Template::ALL.map(|t| (t.path(), t.text()));
        for (path, text) in templates.iter().chain(MODULES.iter()) {
            // Length prefixes keep the concatenation unambiguous.
            for part in [path, text] {
                hasher.update((part.len() as u64).to_le_bytes());
                hasher.update(part.as_bytes());
            }
        }
        hex::encode(hasher.finalize())
    });
    &REVISION
}

/// Trims typst's memoisation caches when dropped, whichever way `render`
/// returns. The trim runs on a thread of its own, so that the caller has its
/// PDF without waiting for it: freeing the entries of one render's caches takes
/// about a tenth of the render.
struct EvictOnDrop;

impl Drop for EvictOnDrop {
    fn drop(&mut self) {
        evictor::request();
    }
}

/// The thread that trims typst's caches after renders.
mod evictor {
    use std::sync::LazyLock;
    use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

    /// How many trims an entry survives unused: the entries a render shares with the
    /// next ones (fonts, the library, the templates' own layout) stay warm.
    const MAX_AGE: usize = 10;

    static REQUESTS: LazyLock<Option<SyncSender<()>>> = LazyLock::new(|| {
        // One request waiting is enough: a trim covers every render that finished
        // before it started.
        let (sender, receiver) = sync_channel(1);
        std::thread::Builder::new()
            .name("typst-evict".into())
            .spawn(move || trim_forever(receiver))
            .ok()
            .map(|_| sender)
    });

    /// Asks for a trim after the render that has just finished.
    pub(super) fn request() {
        match REQUESTS.as_ref() {
            Some(requests) => match requests.try_send(()) {
                Ok(()) | Err(TrySendError::Full(())) => {}
                Err(TrySendError::Disconnected(())) => comemo::evict(MAX_AGE),
            },
            // Without a thread of its own, the render trims as it ends.
            None => comemo::evict(MAX_AGE),
        }
    }

    fn trim_forever(requests: Receiver<()>) {
        while requests.recv().is_ok() {
            comemo::evict(MAX_AGE);
        }
    }
}

fn pdf_timestamp(at: DateTime<Utc>) -> Option<Timestamp> {
    let datetime = Datetime::from_ymd_hms(
        at.year(),
        u8::try_from(at.month()).ok()?,
        u8::try_from(at.day()).ok()?,
        u8::try_from(at.hour()).ok()?,
        u8::try_from(at.minute()).ok()?,
        u8::try_from(at.second()).ok()?,
    )?;
    Some(Timestamp::new_utc(datetime))
}

/// Flattens diagnostics into one line, each message followed by its hints.
/// Spans are left out: they point into embedded templates, which says nothing
/// to the caller.
fn describe(diagnostics: &[SourceDiagnostic]) -> String {
    diagnostics
        .iter()
        .map(|diagnostic| {
            let mut line = diagnostic.message.to_string();
            for hint in &diagnostic.hints {
                line.push_str(" (hint: ");
                line.push_str(&hint.v);
                line.push(')');
            }
            line
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use typst::layout::{Frame, FrameItem};
    use typst::text::TextItem;

    use super::*;

    fn meta(language: &str) -> RenderMeta {
        RenderMeta {
            title: "Heart rhythm measurement report".to_owned(),
            ident: "measurement-42".to_owned(),
            timestamp: DateTime::parse_from_rfc3339("2026-11-22T09:00:00Z")
                .expect("valid timestamp")
                .with_timezone(&Utc),
            language: language.to_owned(),
        }
    }

    /// A complete English measurement with a tachogram; `localise` turns it
    /// into Arabic or Chinese by overriding the strings that matter for
    /// script and direction.
    fn sample() -> serde_json::Value {
        // Chart coordinates are fractions of the plot (see reports::findings).
        let run: Vec<serde_json::Value> = (1..=70)
            .map(|beat| {
                let rr = f64::from(820 + (beat * 37 % 90) - 45);
                serde_json::json!([f64::from(beat) * 0.84 / 60.0, 1.0 - (rr - 600.0) / 500.0])
            })
            .collect();
        let strip_row = |row: i32| {
            let line: Vec<serde_json::Value> = (0..600)
                .map(|i| {
                    serde_json::json!([
                        f64::from(i) / 600.0,
                        0.5 + 0.3 * (f64::from(i + row) / 8.0).sin()
                    ])
                })
                .collect();
            let beats: Vec<serde_json::Value> = (0..36)
                .map(|i| serde_json::json!([f64::from(i) / 36.0 + 0.02, 0.25]))
                .collect();
            let points: Vec<[f64; 2]> = serde_json::from_value(line.into()).unwrap();
            let svg = crate::reports::series::svg_path([points.as_slice()], 178.0, 10.5);
            serde_json::json!({
                "svg": svg, "accepted": beats, "rejected": [[0.5, 0.3]], "unsure": [[0.7, 0.3]],
                "x_ticks": (0..=6).map(|i| serde_json::json!({"at": f64::from(i) / 6.0, "label": (30 * row + 5 * i).to_string()})).collect::<Vec<_>>()
            })
        };
        let findings = serde_json::json!({
            "analysed": true, "failed": false, "heart_rate": 72,
            "result": { "key": "regular", "label": "Regular rhythm", "colour": "green", "color": "#2e7d32" },
            "labels": ["Sinus rhythm"], "reasons": [],
            "quality": { "key": "good", "label": "Good", "color": "#2e7d32", "score": "0.93",
                         "accepted_beats": 71, "rejected_beats": 1 },
            "hrv": [
                { "name": "SDNN", "meaning": "", "value": "32.1", "unit": "ms" },
                { "name": "RMSSD", "meaning": "", "value": "28.4", "unit": "ms" },
                { "name": "pNN50", "meaning": "", "value": "7.1", "unit": "%" },
                { "name": "SD1", "meaning": "", "value": "20.1", "unit": "ms" },
                { "name": "SD2", "meaning": "", "value": "40.3", "unit": "ms" }
            ],
            "tachogram": {
                "svg": crate::reports::series::svg_path(
                    [serde_json::from_value::<Vec<[f64; 2]>>(run.clone().into()).unwrap().as_slice()],
                    163.0,
                    21.0,
                ),
                "marks": run, "markers": true, "points": 70,
                "stretches_svg": crate::reports::series::svg_spans(&[[0.3, 0.45]], 163.0, 21.0),
                "x_ticks": [{"at": 0.0, "label": "0"}, {"at": 0.5, "label": "30"}, {"at": 1.0, "label": "60"}],
                "y_ticks": [{"at": 1.0, "label": "600"}, {"at": 0.0, "label": "1100"}]
            },
            "strip": { "rows": [strip_row(0), strip_row(1)], "row_seconds": 30, "accepted_beats": 72, "rejected_beats": 2, "unsure_beats": 1 }
        });
        let labels = serde_json::json!({
            "brand": "Tacho", "report-title": "Heart rhythm measurement report",
            "report-subtitle": "Single measurement", "patient": "Patient", "name": "Name",
            "birthday": "Date of birth", "age": "Age", "gender": "Sex",
            "physician": "Physician", "not-given": "Not given",
            "measurement": "Measurement", "measured-at": "Measured on",
            "time-zone": "Time zone", "heart-rate": "Heart rate", "bpm": "bpm",
            "result": "Result", "review": "Review", "reviewer-note": "Physician's note",
            "automatic-screening": "Automatic screening", "symptoms": "Symptoms",
            "no-symptoms": "No symptoms reported", "symptom-severity": "Severity",
            "context-activity": "Activity during the measurement",
            "signal-quality": "Signal quality", "duration": "Duration",
            "risk-factors": "Risk factors",
            "comorbidities": "Conditions", "no-comorbidities": "None reported",
            "smoker": "Smoker", "activity-level": "Physical activity",
            "weight": "Weight", "length": "Height",
            "disclaimer": "This report shows the result of a screening. It is not a diagnosis.",
            "page-of": "Page {page} of {total}"
        });
        let chart_labels = serde_json::json!({
            "result-reason": "Reason", "quality-score": "Quality score",
            "beats-accepted": "Beats accepted", "beats-rejected": "Beats rejected",
            "hrv-title": "Heart-rate variability", "no-hrv": "Too few beats.",
            "tachogram": "Tachogram", "ppg-signal": "Pulse signal",
            "tachogram-caption": "Time between accepted heartbeats",
            "ppg-caption": "Pulse signal from the camera", "axis-time-s": "Time (s)",
            "axis-rr-ms": "RR interval (ms)", "legend-intervals": "RR interval",
            "legend-irregular": "Irregular stretch", "legend-beat-accepted": "Detected beat",
            "legend-beat-rejected": "Rejected beat",
            "legend-beat-unsure": "Weak beat (unsure)"
        });
        let mut labels = labels;
        if let (Some(all), Some(more)) = (labels.as_object_mut(), chart_labels.as_object()) {
            all.extend(more.clone());
        }
        let mut data = serde_json::json!({
            "lang": "en", "dir": "ltr",
            "labels": labels,
            "generated_on": "Generated on 22/11/2026 10:00",
            "patient": {
                "name": "Anna Janssens", "birthday": "14/03/1958", "age": "68 years",
                "gender": "Female", "physician": "Dr. Jan Peeters"
            },
            "measurement": {
                "date": "20/11/2026", "time": "23:30", "zone": "Europe/Brussels (UTC+01:00)",
                "status": { "key": "reviewed", "label": "Reviewed by a physician" },
                "review_note": "No abnormalities.",
                "conclusion": { "label": "Sinus rhythm", "color": "#2e7d32",
                                "by": "Reviewed by Dr. Jan Peeters on 21 November 2026" },
                "symptoms": ["Palpitations", "Dizziness"], "severity": "3 of 5",
                "activity": "Resting", "duration": "60 s"
            },
            "risk": {
                "comorbidities": ["High blood pressure"], "smoker": "No",
                "activity": "Moderately active", "weight": "68 kg", "length": "165 cm"
            }
        });
        data["findings"] = findings;
        data
    }

    fn localise(lang: &str) -> serde_json::Value {
        let mut data = sample();
        data["lang"] = lang.into();
        match lang {
            "ar" => {
                data["dir"] = "rtl".into();
                data["labels"]["report-title"] = "تقرير قياس نظم القلب".into();
                data["labels"]["patient"] = "المريض".into();
                data["labels"]["heart-rate"] = "معدل ضربات القلب".into();
                data["labels"]["page-of"] = "الصفحة {page} من {total}".into();
                data["patient"]["name"] = "ليلى حداد".into();
                data["findings"]["result"]["label"] = "نظم منتظم".into();
            }
            "zh" => {
                data["labels"]["report-title"] = "心律测量报告".into();
                data["labels"]["patient"] = "患者".into();
                data["labels"]["heart-rate"] = "心率".into();
                // Glyph ids above 32767, which some cmap readers lose.
                data["labels"]["duration"] = "时长".into();
                data["labels"]["risk-factors"] = "风险因素".into();
                data["labels"]["length"] = "身高".into();
                data["labels"]["page-of"] = "第 {page} 页，共 {total} 页".into();
                data["patient"]["name"] = "王秀英".into();
                data["findings"]["result"]["label"] = "心律规则".into();
                data["measurement"]["activity"] = "静息".into();
                data["risk"]["comorbidities"] = serde_json::json!(["高血压"]);
            }
            _ => {}
        }
        data
    }

    fn engine() -> &'static Engine {
        static ENGINE: LazyLock<Engine> = LazyLock::new(Engine::new);
        &ENGINE
    }

    /// Every run of shaped text on every page.
    fn text_items(document: &PagedDocument) -> Vec<&TextItem> {
        fn collect<'a>(frame: &'a Frame, out: &mut Vec<&'a TextItem>) {
            for (_, item) in frame.items() {
                match item {
                    FrameItem::Group(group) => collect(&group.frame, out),
                    FrameItem::Text(text) => out.push(text),
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        for page in document.pages() {
            collect(&page.frame, &mut out);
        }
        out
    }

    /// All text the document shows, one run a line, to check what came out
    /// without a PDF text extractor.
    fn text_of(document: &PagedDocument) -> String {
        text_items(document)
            .iter()
            .map(|item| item.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn compile_cleanly(data: &serde_json::Value, language: &str) -> PagedDocument {
        let Warned { output, warnings } =
            engine().compile(Template::Measurement, data, &meta(language));
        let document = output.expect("sample compiles");
        assert!(warnings.is_empty(), "warnings: {}", describe(&warnings));
        document
    }

    #[test]
    fn renders_one_page_in_english_arabic_and_chinese() {
        for lang in ["en", "ar", "zh"] {
            let data = localise(lang);
            let document = compile_cleanly(&data, lang);
            assert_eq!(document.pages().len(), 1, "{lang}");
            let text = text_of(&document);
            for shown in [&data["labels"]["report-title"], &data["patient"]["name"]] {
                // Right-to-left lines are laid out word by word in visual
                // order, so look for the words rather than the phrase.
                for word in shown.as_str().unwrap().split_whitespace() {
                    assert!(text.contains(word), "{lang}: {word} missing from {text}");
                }
            }
            // Glyph 0 is the "missing glyph" box: some text found no font.
            for item in text_items(&document) {
                assert!(
                    item.glyphs.iter().all(|glyph| glyph.id != 0),
                    "{lang}: no glyph for {:?}",
                    item.text
                );
            }
            let pdf = engine()
                .render(Template::Measurement, &data, &meta(lang))
                .expect("renders");
            assert!(pdf.starts_with(b"%PDF"), "{lang}");
        }
    }

    #[test]
    fn chinese_headings_use_the_bold_face() {
        let document = compile_cleanly(&localise("zh"), "zh");
        let title = text_items(&document)
            .into_iter()
            .find(|item| item.text.contains("心律测量报告"))
            .expect("title is shown");
        assert_eq!(title.font.info().family, "Noto Sans CJK SC");
        assert_eq!(title.font.info().variant.weight.to_number(), 700);
    }

    #[test]
    fn footer_fills_in_page_numbers() {
        let text = text_of(&compile_cleanly(&sample(), "en"));
        assert!(text.contains("Page 1 of 1"), "{text}");
        assert!(!text.contains("{page}"), "{text}");
    }

    #[test]
    fn same_input_gives_identical_bytes() {
        let data = sample();
        let first = engine()
            .render(Template::Measurement, &data, &meta("en"))
            .unwrap();
        let second = engine()
            .render(Template::Measurement, &data, &meta("en"))
            .unwrap();
        assert!(first == second, "two renders of the same input differ");
    }

    #[test]
    fn declares_pdf_a_3b_and_pdf_ua_1_dated_by_its_data() {
        let pdf = engine()
            .render(Template::Measurement, &sample(), &meta("en"))
            .unwrap();
        // The XMP packet is an unfiltered stream and the catalog a plain object, so their
        // words stand in the bytes as written.
        let text = String::from_utf8_lossy(&pdf);
        for marker in [
            "<pdfaid:part>3</pdfaid:part>",
            "<pdfaid:conformance>B</pdfaid:conformance>",
            "<pdfuaid:part>1</pdfuaid:part>",
            "/OutputIntents",
            "/S/GTS_PDFA1",
            "/DestOutputProfile",
            "/MarkInfo<</Marked true",
            // meta.timestamp, not the clock of the render.
            "/CreationDate(D:20261122090000Z)",
            "<xmp:CreateDate>2026-11-22T09:00:00+00:00</xmp:CreateDate>",
            // The chart images' descriptions, from the report's own labels (ASCII ones as
            // they are; others in UTF-16 below).
            "/Alt(Tachogram: Time between accepted heartbeats)",
            "/Alt(Irregular stretch)",
        ] {
            assert!(text.contains(marker), "{marker} missing");
        }
        let utf16 = |s: &str| -> String {
            let hex: String = s.encode_utf16().map(|unit| format!("{unit:04X}")).collect();
            format!("/Alt<FEFF{hex}>")
        };
        for alt in [
            "Pulse signal from the camera, Time (s) 0\u{2013}30",
            "Pulse signal from the camera, Time (s) 30\u{2013}60",
        ] {
            assert!(text.contains(&utf16(alt)), "/Alt({alt}) missing");
        }
        assert!(!text.contains("/Encrypt"), "encrypted");
    }

    #[test]
    fn a_reviewed_measurement_leads_with_the_physicians_conclusion() {
        let text = text_of(&compile_cleanly(&sample(), "en"));
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s}: {text}"));
        assert!(at("Sinus rhythm") < at("Automatic screening"), "{text}");
        assert!(at("Automatic screening") < at("Regular rhythm"), "{text}");
        assert!(text.contains("Reviewed by Dr. Jan Peeters on 21 November 2026"));
        let mut unreviewed = sample();
        unreviewed["measurement"]["conclusion"] = serde_json::Value::Null;
        let text = text_of(&compile_cleanly(&unreviewed, "en"));
        assert!(!text.contains("Automatic screening"), "{text}");
        assert!(text.contains("Regular rhythm"), "{text}");
    }

    #[test]
    fn markup_in_data_is_printed_not_evaluated() {
        let mut data = sample();
        data["patient"]["name"] = r#"#eval("1+1") <script>"#.into();
        data["measurement"]["review_note"] = "*not bold* $x^2$ #panic()".into();
        let text = text_of(&compile_cleanly(&data, "en"));
        assert!(text.contains(r#"#eval("1+1")"#), "{text}");
        assert!(text.contains("<script>"), "{text}");
        assert!(text.contains("*not bold* $x^2$ #panic()"), "{text}");
    }

    #[test]
    fn nulls_and_missing_chart_still_render() {
        let mut data = sample();
        data["patient"]["birthday"] = serde_json::Value::Null;
        data["patient"]["physician"] = serde_json::Value::Null;
        data["measurement"]["review_note"] = serde_json::Value::Null;
        data["measurement"]["symptoms"] = serde_json::json!([]);
        data["findings"] = serde_json::Value::Null;
        data["risk"] = serde_json::Value::Null;
        let text = text_of(&compile_cleanly(&data, "en"));
        assert!(text.contains("Not given"), "{text}");
        assert!(text.contains("No symptoms reported"), "{text}");
    }

    #[test]
    fn data_breaking_the_contract_is_a_template_error() {
        let mut data = sample();
        data.as_object_mut().unwrap().remove("measurement");
        let err = engine()
            .render(Template::Measurement, &data, &meta("en"))
            .expect_err("must not render");
        assert!(matches!(err, RenderError::Template(_)), "{err:?}");

        let err = engine()
            .render(
                Template::Measurement,
                &serde_json::json!([1, 2]),
                &meta("en"),
            )
            .expect_err("must not render");
        assert!(matches!(err, RenderError::Template(_)), "{err:?}");
    }

    #[test]
    fn revision_is_a_sha256_in_hex() {
        assert_eq!(revision().len(), 64);
        assert!(
            revision()
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }
}
