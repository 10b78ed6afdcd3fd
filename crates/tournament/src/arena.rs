//! Arena tournaments: scoring and pairing.
