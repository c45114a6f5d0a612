//! Aliases are numbered in the order their lines are written, so a trace
//! depends only on the events, not on how far each converter read ahead
//! when it registered a type or a container.

use std::process::Command;

#[test]
fn aliases_count_up_through_the_file() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("x.paje");
    let ex = "examples/pingpong-localhost";
    let o = Command::new(env!("CARGO_BIN_EXE_integrador"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["-q", "-hierarchy", "hierarchies/mpi+os+ganglia+pcp.toml"])
        .args(["-mpi", &format!("{ex}/mpi_pingpong.clog2")])
        .args(["-mpinodes", &format!("{ex}/mpi.nodes")])
        .args(["-ganglia", &format!("{ex}/ganglia.traced")])
        .args([
            "-os",
            &format!("{ex}/vm.os"),
            "-pcp",
            &format!("{ex}/pcp/vm"),
        ])
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    // The alias a line defines is its last field: type definitions (0, 1,
    // 2, 9, 10), values (3) and container creations (4).
    let mut next = [0u32; 3];
    let mut defined = 0;
    for line in text.lines().filter(|l| !l.starts_with('%')) {
        let mut f = line.split(' ');
        let (Some(id), Some(last)) = (f.next(), line.rsplit(' ').next()) else {
            continue;
        };
        let slot = match id {
            "0" | "1" | "2" | "9" | "10" if last != "origin" => 0,
            "3" => 1,
            "4" => 2,
            _ => continue,
        };
        let want = format!("{}{}", ['t', 'v', 'c'][slot], next[slot]);
        assert_eq!(last, want, "line `{line}`");
        next[slot] += 1;
        defined += 1;
    }
    assert!(defined > 30, "{defined} definitions");
}
