//! Config parsing: any text either fails with a message or gives a valid config that survives a
//! YAML round trip unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mira::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut cfg) = Config::from_yaml(text) else {
        return;
    };
    // The ignored keys it held are warned about, not written back.
    cfg.retired_keys.clear();
    cfg.validate().expect("a parsed config is valid");
    let yaml = serde_norway::to_string(&cfg).expect("a config serialises");
    let again = Config::from_yaml(&yaml).expect("a serialised config parses");
    assert_eq!(again, cfg);
});
