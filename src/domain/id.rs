//! Object ids: 12 bytes shown as 24 lower-case hex characters, laid out like a MongoDB ObjectId
//! (4-byte seconds since the epoch, 5 random bytes per process, 3-byte counter), so that sorting
//! by id sorts by creation time.

use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A parsed, well-formed object id.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id([u8; 12]);

/// The text given was not 24 hexadecimal characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a valid id (24 hexadecimal characters)")]
pub struct IdFormatError(pub String);

struct ProcessState {
    random: [u8; 5],
    counter: AtomicU32,
}

fn process_state() -> &'static ProcessState {
    static STATE: OnceLock<ProcessState> = OnceLock::new();
    STATE.get_or_init(|| ProcessState {
        random: rand::random(),
        counter: AtomicU32::new(rand::random::<u32>() & 0x00ff_ffff),
    })
}

impl Id {
    /// The id of no object: all zeros, which [`Id::generate`] never makes (its time part is
    /// the current second).
    pub const ZERO: Id = Id([0; 12]);

    /// A new id for an object created now.
    pub fn generate() -> Self {
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as u32)
            .unwrap_or_default();
        let state = process_state();
        let count = state.counter.fetch_add(1, Ordering::Relaxed) & 0x00ff_ffff;
        let mut bytes = [0u8; 12];
        bytes[..4].copy_from_slice(&seconds.to_be_bytes());
        bytes[4..9].copy_from_slice(&state.random);
        bytes[9..].copy_from_slice(&count.to_be_bytes()[1..]);
        Id(bytes)
    }

    /// Parses 24 hexadecimal characters (either case); the canonical form is lower-case.
    pub fn parse(text: &str) -> Result<Self, IdFormatError> {
        let invalid = || IdFormatError(text.chars().take(64).collect());
        if text.len() != 24 {
            return Err(invalid());
        }
        let mut bytes = [0u8; 12];
        hex::decode_to_slice(text, &mut bytes).map_err(|_| invalid())?;
        Ok(Id(bytes))
    }

    /// Seconds since the epoch at which the id was generated.
    pub fn seconds(&self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }

    /// The id's three 4-byte words combined by exclusive or: a key of 32 bits that ids of
    /// the same second still tell apart by their random bytes and counter.
    pub fn fold32(&self) -> i32 {
        self.0
            .chunks_exact(4)
            .map(|w| i32::from_be_bytes([w[0], w[1], w[2], w[3]]))
            .fold(0, |key, word| key ^ word)
    }
}

/// A fixed id named by a short text, for tests that want readable ids: the name's bytes,
/// padded with zeros (names longer than 12 bytes are cut).
#[cfg(test)]
pub fn named(name: &str) -> Id {
    let mut bytes = [0u8; 12];
    for (slot, byte) in bytes.iter_mut().zip(name.bytes()) {
        *slot = byte;
    }
    Id(bytes)
}

#[cfg(test)]
impl From<&str> for Id {
    fn from(name: &str) -> Id {
        named(name)
    }
}

/// An id read from text (a path segment, a JSON string) is parsed there: what is not 24
/// hexadecimal characters never becomes an `Id`.
impl<'de> serde::Deserialize<'de> for Id {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Id::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Ids are written as their 24-character text, in JSON as anywhere else.
impl serde::Serialize for Id {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({self})")
    }
}

impl From<Id> for String {
    fn from(id: Id) -> String {
        id.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_24_hex_and_increase() {
        let ids: Vec<Id> = (0..1000).map(|_| Id::generate()).collect();
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1] || pair[0].seconds() < pair[1].seconds());
        }
        let text = ids[0].to_string();
        assert_eq!(text.len(), 24);
        assert!(
            text.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert_eq!(Id::parse(&text), Ok(ids[0]));
    }

    #[test]
    fn folded_keys_tell_ids_of_one_second_apart() {
        let ids: Vec<Id> = (0..1000)
            .map(|counter| Id::parse(&format!("5f3c2b1a0d9e8f7a6b{counter:06x}")).unwrap())
            .collect();
        let keys: std::collections::BTreeSet<i32> = ids.iter().map(Id::fold32).collect();
        assert_eq!(keys.len(), ids.len());
        let id = Id::parse("0000000100000002000000f0").unwrap();
        assert_eq!(id.fold32(), 1 ^ 2 ^ 0xf0);
    }

    #[test]
    fn parse_rejects_malformed_ids() {
        for bad in [
            "",
            "abc",
            "zz3c2b1a0d9e8f7a6b5c4d3e",
            "5f3c2b1a0d9e8f7a6b5c4d3e0",
            "é5f3c2b1a0d9e8f7a6b5c4d",
        ] {
            assert!(Id::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Id::parse("5F3C2B1A0D9E8F7A6B5C4D3E").unwrap().to_string(),
            "5f3c2b1a0d9e8f7a6b5c4d3e"
        );
    }
}
