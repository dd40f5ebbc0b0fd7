//! The sealed environment one report is compiled in.
//!
//! A template sees its own source, the modules it may import, `/data.json` and
//! `/page.json`, the fonts compiled into the binary, and a fixed "today". It
//! cannot reach the file system, the network, packages or the clock, which is
//! what makes a report a pure function of its inputs.

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

/// Where templates find what every report of their language shares: `json("/page.json")`.
pub(crate) static PAGE_ID: LazyLock<FileId> = LazyLock::new(|| project_file("/page.json"));

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
    /// Modules the template may import.
    modules: &'a [Source],
    page: Bytes,
    data: Bytes,
    now: DateTime<Utc>,
}

impl<'a> RenderWorld<'a> {
    /// `main` is the template, `page` and `data` the serialised JSON behind
    /// `/page.json` and `/data.json`, and `now` the instant `datetime.today()` answers from.
    pub(crate) fn new(
        shared: &'a Shared,
        main: Source,
        modules: &'a [Source],
        (page, data): (Vec<u8>, Vec<u8>),
        now: DateTime<Utc>,
    ) -> Self {
        Self {
            shared,
            main,
            modules,
            page: Bytes::new(page),
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
        } else if id == *DATA_ID || id == *PAGE_ID {
            Err(FileError::NotSource)
        } else if let Some(module) = self.modules.iter().find(|m| m.id() == id) {
            Ok(module.clone())
        } else {
            Err(not_found(id))
        }
    }

    fn file(&self, id: FileId) -> FileResult<Bytes> {
        if id == *DATA_ID {
            Ok(self.data.clone())
        } else if id == *PAGE_ID {
            Ok(self.page.clone())
        } else if id == self.main.id() {
            Ok(Bytes::from_string(self.main.text().to_owned()))
        } else if let Some(module) = self.modules.iter().find(|m| m.id() == id) {
            Ok(Bytes::from_string(module.text().to_owned()))
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

/// The error for every path but those a template may read; packages get
/// their own error so the message says why `@preview/…` imports fail.
fn not_found(id: FileId) -> FileError {
    match id.root() {
        VirtualRoot::Package(spec) => FileError::Package(PackageError::NotFound(spec.clone())),
        VirtualRoot::Project => FileError::NotFound(id.vpath().get_with_slash().to_owned().into()),
    }
}

#[cfg(test)]
mod tests {
    use typst::LibraryExt;

    use super::*;

    fn shared() -> Shared {
        Shared {
            library: LazyHash::new(Library::default()),
            book: LazyHash::new(FontBook::new()),
            fonts: Vec::new(),
        }
    }

    fn world(shared: &Shared) -> RenderWorld<'_> {
        let main = Source::new(project_file("/main.typ"), "= Hi".to_owned());
        let now = DateTime::parse_from_rfc3339("2026-11-22T23:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        RenderWorld::new(shared, main, &[], (b"{}".to_vec(), b"{}".to_vec()), now)
    }

    #[test]
    fn serves_only_the_template_and_its_data() {
        let shared = shared();
        let world = world(&shared);
        assert_eq!(world.file(*DATA_ID).unwrap().as_slice(), b"{}");
        assert_eq!(world.file(*PAGE_ID).unwrap().as_slice(), b"{}");
        assert!(world.source(world.main()).is_ok());
        for path in ["/etc/passwd", "/main.typ/../data.txt", "/fonts/x.ttf"] {
            assert!(
                matches!(world.file(project_file(path)), Err(FileError::NotFound(_))),
                "{path}"
            );
        }
        assert!(world.font(0).is_none());
    }

    #[test]
    fn today_is_the_render_timestamp() {
        let shared = shared();
        let world = world(&shared);
        assert_eq!(world.today(None), Datetime::from_ymd(2026, 11, 22));
        let plus_one_hour = Duration::construct(0, 0, 1, 0, 0);
        assert_eq!(
            world.today(Some(plus_one_hour)),
            Datetime::from_ymd(2026, 11, 23)
        );
    }
}
