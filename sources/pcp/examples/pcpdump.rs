//! Prints a PCP archive's values as `epoch,pmid,metric,inst,instance,value`
//! (the fixtures' `values.csv` layout, floats with Rust's shortest form):
//! `pcpdump ARCHIVE`, or `pcpdump --count ARCHIVE` for counts and timing.

use integrador_pcp::meta::Metadata;
use integrador_pcp::{archive, Archive, ResultRecord, Value, VolumeReader};
use integrador_pcp::{InDom, PmType};
use std::io::Write;
use std::path::Path;

fn fail(what: impl std::fmt::Display) -> ! {
    eprintln!("pcpdump: {what}");
    std::process::exit(1)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let count_only = args.first().is_some_and(|a| a == "--count");
    if count_only {
        args.remove(0);
    }
    let Some(arg) = args.first() else {
        fail("usage: pcpdump [--count] ARCHIVE")
    };
    let started = std::time::Instant::now();
    let a = Archive::find(&Archive::base_of(Path::new(arg))).unwrap_or_else(|e| fail(e));
    let md = archive::open(&a.meta)
        .map_err(|e| e.to_string())
        .and_then(|r| Metadata::read(r).map_err(|e| e.to_string()))
        .unwrap_or_else(|e| fail(format!("{}: {e}", a.meta.display())));
    let v3 = md.label.as_ref().is_some_and(|l| l.version == 3);
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let (mut records, mut values, mut bytes) = (0u64, 0u64, 0u64);
    let mut rec = ResultRecord::default();
    for vol in &a.volumes {
        let r = archive::open(&vol.path)
            .unwrap_or_else(|e| fail(format!("{}: {e}", vol.path.display())));
        let mut v =
            VolumeReader::new(r).unwrap_or_else(|e| fail(format!("{}: {e}", vol.path.display())));
        while v
            .next_into(&mut rec)
            .unwrap_or_else(|e| fail(format!("{}: {e}", vol.path.display())))
        {
            records += 1;
            bytes = bytes.max(rec.offset);
            let t = if v3 {
                format!("{}.{:09}", rec.time.sec, rec.time.nsec)
            } else {
                format!("{}.{:06}", rec.time.sec, rec.time.nsec / 1000)
            };
            if rec.mark && !count_only {
                let _ = writeln!(out, "{t},,<mark>,,,");
            }
            for set in &rec.sets {
                let desc = md.descs.get(&set.pmid);
                for (inst, val) in &set.values {
                    values += 1;
                    if count_only {
                        continue;
                    }
                    let name = desc
                        .and_then(|d| d.names.first())
                        .map_or("?", String::as_str);
                    let indom = desc.map_or(InDom::NULL, |d| d.indom);
                    let (i, iname) = if indom == InDom::NULL {
                        (String::new(), String::new())
                    } else {
                        (
                            inst.to_string(),
                            md.indoms
                                .name_at(indom, *inst, rec.time)
                                .unwrap_or("?")
                                .to_string(),
                        )
                    };
                    let shown = match val {
                        Value::Insitu(x) if desc.is_some_and(|d| d.ty == PmType::I32) => {
                            (*x as i32).to_string()
                        }
                        Value::Insitu(x) => x.to_string(),
                        Value::I64(x) => x.to_string(),
                        Value::U64(x) => x.to_string(),
                        Value::F32(x) => x.to_string(),
                        Value::F64(x) => x.to_string(),
                        Value::Str(s) => s.clone(),
                        Value::Skipped(t) => format!("<type {t}>"),
                    };
                    let _ = writeln!(out, "{t},{},{name},{i},{iname},{shown}", set.pmid);
                }
            }
        }
        if let Some(at) = v.truncated() {
            eprintln!(
                "pcpdump: {}: byte {at}: the volume ends inside a record",
                vol.path.display()
            );
        }
    }
    let _ = out.flush();
    if count_only {
        let s = started.elapsed().as_secs_f64();
        println!(
            "{records} records, {values} values in {s:.3} s: {:.1} M values/s",
            values as f64 / s / 1e6
        );
        let _ = bytes;
    }
}
