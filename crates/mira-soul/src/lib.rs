//! SOUL, the identity extension of mira (opt-in). Implemented in a later issue.
