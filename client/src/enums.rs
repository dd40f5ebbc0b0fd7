//! Enumerated wire strings as Rust enums that keep unknown values, so a client built today
//! still reads what a newer server sends.

/// Declares an enum of wire strings with an `Other(String)` escape, serialised as the string.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident => $wire:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this version of the client does not know, kept verbatim.
            Other(String),
        }

        impl $name {
            /// The value as it travels on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )+
                    $name::Other(other) => other,
                }
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                match text {
                    $( $wire => $name::$variant, )+
                    other => $name::Other(other.to_owned()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                Ok($name::from(text.as_ref()))
            }
        }
    };
}

pub(crate) use wire_enum;

#[cfg(test)]
mod tests {
    wire_enum! {
        /// A test enum.
        Colour { Red => "RED", DarkBlue => "DARK_BLUE" }
    }

    #[test]
    fn known_and_unknown_values_round_trip() {
        let parsed: Vec<Colour> = serde_json::from_str(r#"["RED","DARK_BLUE","PLAID"]"#).unwrap();
        assert_eq!(
            parsed,
            vec![Colour::Red, Colour::DarkBlue, Colour::Other("PLAID".into())]
        );
        assert_eq!(
            serde_json::to_string(&parsed).unwrap(),
            r#"["RED","DARK_BLUE","PLAID"]"#
        );
        assert_eq!(Colour::DarkBlue.to_string(), "DARK_BLUE");
    }
}
