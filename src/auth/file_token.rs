//! App tokens (`readFileToken`, `<24-hex file id>-<uuid v4>`): derived, never stored. The
//! secret part is HMAC-SHA256 (RFC 2104) of the file's id and token version under a server key
//! shared by every instance through the database, cut to 128 bits and written as a version-4
//! UUID, as the wire contract's format requires. A revocation moves the file's version, which
//! changes its token; a token handed out before tokens were derived is accepted while the
//! file keeps the SHA-256 of its secret.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::token::{hash, same_secret};
use crate::store::entities::file;

/// Makes and checks app tokens under one key.
#[derive(Clone)]
pub struct FileTokens {
    key: Vec<u8>,
}

impl std::fmt::Debug for FileTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FileTokens")
    }
}

impl FileTokens {
    /// Tokens under `key` (the server's, at least 32 bytes of randomness).
    pub fn new(key: &[u8]) -> Self {
        FileTokens { key: key.to_vec() }
    }

    /// The token of `file` as it is now.
    pub fn token(&self, file: &file::Model) -> String {
        format!("{}-{}", file.id, self.secret(file))
    }

    /// Whether `secret` (the part after the id) opens `file`.
    pub fn opens(&self, file: &file::Model, secret: &str) -> bool {
        same_secret(&self.secret(file), secret)
            || (!file.legacy_secret_hash.is_empty()
                && same_secret(&file.legacy_secret_hash, &hash(secret)))
    }

    fn secret(&self, file: &file::Model) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(file.id.to_string().as_bytes());
        mac.update(&file.token_version.to_be_bytes());
        let digest = mac.finalize().into_bytes();
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .hyphenated()
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::id::Id;

    fn file(version: i32, legacy: &str) -> file::Model {
        file::Model {
            id: Id::generate(),
            legacy_secret_hash: legacy.into(),
            token_version: version,
            cache_key: String::new(),
            name: "r.pdf".into(),
            patient_id: None,
            mimetype: "application/pdf".into(),
            size: 1,
            sha256: String::new(),
            sha1: None,
            creation_timestamp: 0,
        }
    }

    #[test]
    fn tokens_are_v4_uuids_that_open_their_file_until_the_version_moves() {
        let tokens = FileTokens::new(b"a key of thirty-two bytes at least!!");
        let f = file(0, "");
        let token = tokens.token(&f);
        let (id, secret) = token.split_once('-').unwrap();
        assert_eq!(id, f.id.to_string());
        let uuid = uuid::Uuid::parse_str(secret).unwrap();
        assert_eq!(uuid.get_version_num(), 4);
        assert!(tokens.opens(&f, secret));
        assert_eq!(token, tokens.token(&f), "the same token again");
        let moved = file::Model {
            token_version: 1,
            ..f.clone()
        };
        assert!(!tokens.opens(&moved, secret), "revoked");
        assert!(!FileTokens::new(b"another key").opens(&f, secret));
        // A secret handed out before tokens were derived opens while its hash is kept.
        let old = "2c1f1e0a-7b6c-4d5e-8f90-a1b2c3d4e5f6";
        assert!(tokens.opens(&file(0, &hash(old)), old));
        assert!(!tokens.opens(&file(0, ""), old));
    }
}
