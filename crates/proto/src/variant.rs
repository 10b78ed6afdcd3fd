//! The protobuf variants and the rules' [`fogblast_rules::Variant`], one
//! to one: every service converts through these, and names a variant
//! through the rules' table (`Variant::name` and its other spellings).

use fogblast_rules::Variant;

use crate::{engine, game};

/// A protobuf variant that is unset (`VARIANT_UNSPECIFIED`) or unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the variant is unspecified: expected standard, atomic or fog")]
pub struct UnspecifiedVariant;

macro_rules! convert_variant {
    ($($proto:ident),+) => {$(
        impl From<Variant> for $proto::Variant {
            fn from(variant: Variant) -> $proto::Variant {
                match variant {
                    Variant::Standard => $proto::Variant::Standard,
                    Variant::Atomic => $proto::Variant::Atomic,
                    Variant::Fog => $proto::Variant::Fog,
                }
            }
        }

        impl TryFrom<$proto::Variant> for Variant {
            type Error = UnspecifiedVariant;

            fn try_from(variant: $proto::Variant) -> Result<Variant, UnspecifiedVariant> {
                match variant {
                    $proto::Variant::Standard => Ok(Variant::Standard),
                    $proto::Variant::Atomic => Ok(Variant::Atomic),
                    $proto::Variant::Fog => Ok(Variant::Fog),
                    $proto::Variant::Unspecified => Err(UnspecifiedVariant),
                }
            }
        }
    )+};
}

convert_variant!(game, engine);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_round_trips_through_both_protobuf_enums() {
        for variant in Variant::ALL {
            assert_eq!(Variant::try_from(game::Variant::from(variant)), Ok(variant));
            assert_eq!(Variant::try_from(engine::Variant::from(variant)), Ok(variant));
            assert_eq!(game::Variant::from(variant) as i32, engine::Variant::from(variant) as i32);
        }
        assert_eq!(Variant::try_from(game::Variant::Unspecified), Err(UnspecifiedVariant));
        assert_eq!(Variant::try_from(engine::Variant::Unspecified), Err(UnspecifiedVariant));
    }
}
