//! The PCP decoder against the real fixtures: every value that pmdumplog
//! prints (the fixtures' `values.csv`) is decoded identically; labels and
//! descriptors equal `expected.json`; v2, v3, xz and zstd give the same
//! values.

mod common;

use common::{fixture, read_json};
use integrador::clock::parse_epoch_ns;
use integrador_pcp::meta::{units_fields, Metadata};
use integrador_pcp::{archive, Archive, ResultRecord, Value, VolumeReader};
use integrador_pcp::{InDom, PmType, Pmid};
use std::path::Path;

/// (ns, pmid, metric, inst, instance, value) per value; marks as
/// `<mark>` rows.
type Row = (i64, String, String, String, String, String);

fn decode(arg: &Path) -> (Metadata, Vec<Row>) {
    let a = Archive::find(&Archive::base_of(arg)).unwrap();
    let md = Metadata::read(archive::open(&a.meta).unwrap()).unwrap();
    let mut rows = Vec::new();
    let mut rec = ResultRecord::default();
    for vol in &a.volumes {
        let mut v = VolumeReader::new(archive::open(&vol.path).unwrap()).unwrap();
        while v.next_into(&mut rec).unwrap() {
            let t = rec.time.ns();
            if rec.mark {
                rows.push((
                    t,
                    String::new(),
                    "<mark>".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                ));
            }
            for set in &rec.sets {
                let d = &md.descs[&set.pmid];
                for (inst, val) in &set.values {
                    let (i, name) = if d.indom == InDom::NULL {
                        (String::new(), String::new())
                    } else {
                        (
                            inst.to_string(),
                            md.indoms
                                .name_at(d.indom, *inst, rec.time)
                                .unwrap()
                                .to_string(),
                        )
                    };
                    let shown = match val {
                        Value::Insitu(x) if d.ty == PmType::I32 => (*x as i32).to_string(),
                        Value::Insitu(x) => x.to_string(),
                        Value::I64(x) => x.to_string(),
                        Value::U64(x) => x.to_string(),
                        Value::F32(x) => format!("f{x}"),
                        Value::F64(x) => format!("f{x}"),
                        Value::Str(s) => s.clone(),
                        Value::Skipped(t) => panic!("skipped type {t}"),
                    };
                    rows.push((t, set.pmid.to_string(), d.names[0].clone(), i, name, shown));
                }
            }
        }
        assert_eq!(v.truncated(), None);
    }
    (md, rows)
}

fn csv_rows(path: &Path) -> Vec<Row> {
    let mut r = csv::Reader::from_path(path).unwrap();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            let f = |i: usize| rec.get(i).unwrap().to_string();
            (
                parse_epoch_ns(f(0).as_bytes()).unwrap(),
                f(1),
                f(2),
                f(3),
                f(4),
                f(5),
            )
        })
        .collect()
}

fn same_value(mine: &str, theirs: &str) -> bool {
    match mine.strip_prefix('f') {
        // pmdumplog prints floats with %.8g.
        Some(x) => {
            let (a, b): (f64, f64) = (x.parse().unwrap(), theirs.parse().unwrap());
            (a - b).abs() <= 1e-7 * a.abs().max(1e-30)
        }
        None => mine == theirs,
    }
}

fn check(archive_arg: &str, truth: &str) -> usize {
    let (_, mine) = decode(&fixture(archive_arg));
    let theirs = csv_rows(&fixture(truth));
    assert_eq!(mine.len(), theirs.len(), "{archive_arg}");
    for (m, t) in mine.iter().zip(&theirs) {
        assert_eq!(
            (m.0, &m.1, &m.2, &m.3, &m.4),
            (t.0, &t.1, &t.2, &t.3, &t.4),
            "{archive_arg}"
        );
        assert!(same_value(&m.5, &t.5), "{archive_arg}: {m:?} vs {t:?}");
    }
    mine.len()
}

#[test]
fn every_value_equals_values_csv() {
    let base = "pcp/pmlogger_v2/20261121.12.34";
    let n = check(&format!("{base}.0"), &format!("{base}.values.csv"));
    assert!(n > 1000, "{n}");
    // The same archive as v3, xz and zstd: the same values.
    for other in ["pmlogger_v2_as_v3", "pmlogger_v2_xz", "pmlogger_v2_zst"] {
        let arg = format!(
            "pcp/{other}/20261121.12.34.meta{}",
            if other.contains("as_v3") {
                ""
            } else if other.ends_with("xz") {
                ".xz"
            } else {
                ".zst"
            }
        );
        assert_eq!(
            check(&arg, &format!("pcp/{other}/20261121.12.34.values.csv")),
            n,
            "{other}"
        );
    }
    check(
        "pcp/multihost/node01.index",
        "pcp/multihost/node01.values.csv",
    );
    check("pcp/multihost/node02.0", "pcp/multihost/node02.values.csv");
}

#[test]
fn labels_and_descriptors_equal_expected_json() {
    for (arg, truth) in [
        (
            "pcp/pmlogger_v2/20261121.12.34.0",
            "pcp/pmlogger_v2/20261121.12.34.expected.json",
        ),
        (
            "pcp/pmlogger_v2_xz/20261121.12.34.0.xz",
            "pcp/pmlogger_v2_xz/20261121.12.34.expected.json",
        ),
        (
            "pcp/multihost/node01.0",
            "pcp/multihost/node01.expected.json",
        ),
        (
            "pcp/multihost/node02.0",
            "pcp/multihost/node02.expected.json",
        ),
    ] {
        let exp = read_json(&fixture(truth));
        let (md, rows) = decode(&fixture(arg));
        let l = md.label.as_ref().unwrap();
        let el = &exp["label"];
        assert_eq!(u64::from(l.version), el["version"].as_u64().unwrap());
        assert_eq!(i64::from(l.pid), el["pid"].as_i64().unwrap());
        assert_eq!(l.host, el["hostname"].as_str().unwrap());
        assert_eq!(l.timezone, el["timezone"].as_str().unwrap());
        assert_eq!(l.zoneinfo.as_deref(), el["zoneinfo"].as_str());
        assert_eq!(l.start.sec, el["start"]["sec"].as_i64().unwrap());
        assert_eq!(
            i64::from(l.start.nsec),
            el["start"]["nsec"].as_i64().unwrap()
        );
        // The label's end is the last record's time.
        let last = rows.iter().map(|r| r.0).max().unwrap();
        assert_eq!(
            last,
            parse_epoch_ns(el["end"]["epoch"].as_str().unwrap().as_bytes()).unwrap(),
            "{arg}"
        );
        let marks = rows.iter().filter(|r| r.2 == "<mark>").count();
        assert_eq!(
            marks,
            exp["mark_records"].as_array().unwrap().len(),
            "{arg}"
        );
        for m in exp["metrics"].as_array().unwrap() {
            let d = &md.descs[&Pmid(m["pmid_u32"].as_u64().unwrap() as u32)];
            assert_eq!(d.names[0], m["name"].as_str().unwrap());
            assert_eq!(i64::from(d.ty.0), m["type_code"].as_i64().unwrap());
            assert_eq!(i64::from(d.sem.0), m["sem_code"].as_i64().unwrap());
            assert_eq!(u64::from(d.indom.0), m["indom_u32"].as_u64().unwrap());
            let u = units_fields(d.units);
            let f = &m["units_fields"];
            let want: Vec<i64> = [
                "dimSpace",
                "dimTime",
                "dimCount",
                "scaleSpace",
                "scaleTime",
                "scaleCount",
            ]
            .iter()
            .map(|k| f[*k].as_i64().unwrap())
            .collect();
            assert_eq!(
                u.iter().map(|&x| i64::from(x)).collect::<Vec<_>>(),
                want,
                "{}",
                m["name"]
            );
            let n = rows
                .iter()
                .filter(|r| r.2 == m["name"].as_str().unwrap())
                .count();
            assert_eq!(
                n as u64,
                m["values_total"].as_u64().unwrap(),
                "{}",
                m["name"]
            );
        }
        for r in exp["indom_records"].as_array().unwrap() {
            let t = integrador_pcp::Stamp {
                sec: r["sec"].as_i64().unwrap(),
                nsec: r["nsec"].as_u64().unwrap() as u32,
            };
            let dotted = r["indom"].as_str().unwrap();
            let (dom, serial) = dotted.split_once('.').unwrap();
            let indom = (dom.parse::<u32>().unwrap() << 22) | serial.parse::<u32>().unwrap();
            for i in r["instances"].as_array().unwrap() {
                let inst = i[0].as_i64().unwrap() as i32;
                assert_eq!(
                    md.indoms.name_at(InDom(indom), inst, t),
                    i[1].as_str(),
                    "{arg} {dotted} {inst}"
                );
            }
        }
    }
}
