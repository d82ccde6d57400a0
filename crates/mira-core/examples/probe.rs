fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--stdin") {
        use std::io::BufRead;
        args = std::io::stdin().lock().lines().map_while(Result::ok).collect();
    }
    for t in args {
        let ty = mira_core::classify::classify(&t);
        let f = mira_core::fingerprint::extract(&t, ty, 2);
        let cues: Vec<String> = mira_core::causal::detect_cues(&t).iter().map(|c| format!("{}:{}", c.relation, c.strength)).collect();
        println!("{t}\n   => {}  cues={cues:?}", f.to_json());
    }
}
