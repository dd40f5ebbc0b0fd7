//! The sealed environment one report is compiled in.
//!
//! A template sees exactly two files, its own source and `/data.json`, the
//! fonts compiled into the binary, and a fixed "today". It cannot reach the
//! file system, the network, packages or the clock, which is what makes a
//! report a pure function of its inputs.

use std::sync::LazyLock;

use chrono::{DateTime, Datelike, TimeDelta, Utc};
use typst::diag::{FileError, FileResult, PackageError};
use typst::foundations::{Bytes, Datetime, Duration};
use typst::syntax::{FileId, RootedPath, Source, VirtualPath, VirtualRoot};
use typst::text::{Font, FontBook};
use typst::utils::LazyHash;
use typst::{Library, World};

/// Where templates find the data they are given: `json("/data.json")`.
pub(crate) static DATA_ID: LazyLock<FileId> = LazyLock::new(|| project_file("/data.json"));

/// Interns a path in the project root.
///
/// File ids are interned process-wide and never freed, so they are made once
/// per path rather than once per render.
pub(crate) fn project_file(path: &str) -> FileId {
    let vpath = VirtualPath::new(path).expect("template paths are valid virtual paths");
    FileId::new(RootedPath::new(VirtualRoot::Project, vpath))
}

/// The state that outlives renders: the standard library and the fonts.
pub(crate) struct Shared {
    pub(crate) library: LazyHash<Library>,
    pub(crate) book: LazyHash<FontBook>,
    pub(crate) fonts: Vec<Font>,
}

/// One render's view of the world; cheap to build since everything heavy is
/// borrowed from [`Shared`] or reference-counted.
pub(crate) struct RenderWorld<'a> {
    shared: &'a Shared,
    main: Source,
    data: Bytes,
    now: DateTime<Utc>,
}

impl<'a> RenderWorld<'a> {
    /// `main` is the template, `data` the serialised JSON behind
    /// `/data.json`, and `now` the instant `datetime.today()` answers from.
    pub(crate) fn new(shared: &'a Shared, main: Source, data: Vec<u8>, now: DateTime<Utc>) -> Self {
        Self {
            shared,
            main,
            data: Bytes::new(data),
            now,
        }
    }
}

impl World for RenderWorld<'_> {
    fn library(&self) -> &LazyHash<Library> {
        &self.shared.library
    }

    fn book(&self) -> &LazyHash<FontBook> {
        &self.shared.book
    }

    fn main(&self) -> FileId {
        self.main.id()
    }

    fn source(&self, id: FileId) -> FileResult<Source> {
        if id == self.main.id() {
            Ok(self.main.clone())
        } else if id == *DATA_ID {
            Err(FileError::NotSource)
        } else {
            Err(not_found(id))
        }
    }

    fn file(&self, id: FileId) -> FileResult<Bytes> {
        if id == *DATA_ID {
            Ok(self.data.clone())
        } else if id == self.main.id() {
            Ok(Bytes::from_string(self.main.text().to_owned()))
        } else {
            Err(not_found(id))
        }
    }

    fn font(&self, index: usize) -> Option<Font> {
        self.shared.fonts.get(index).cloned()
    }

    fn today(&self, offset: Option<Duration>) -> Option<Datetime> {
        // Without an offset typst asks for the local date; the server's zone
        // must not leak into a report, so that is taken to be UTC as well.
        let seconds = offset.map_or(0.0, |offset| offset.seconds()).round();
        let at = self.now + TimeDelta::try_seconds(seconds as i64)?;
        Datetime::from_ymd(
            at.year(),
            u8::try_from(at.month()).ok()?,
            u8::try_from(at.day()).ok()?,
        )
    }
}

/// The error for every path but the two a template may read; packages get
/// their own error so the message says why `@preview/…` imports fail.
fn not_found(id: FileId) -> FileError {
    match id.root() {
        VirtualRoot::Package(spec) => FileError::Package(PackageError::NotFound(spec.clone())),
        VirtualRoot::Project => FileError::NotFound(id.vpath().get_with_slash().to_owned().into()),
    }
}
