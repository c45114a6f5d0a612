//! Opening a libRastro run: pass 1, then every file placed on its host's
//! clock and its containers resolved.

use super::scan::Scan;
use super::walk::{open_file, FileInfo};
use super::*;
use crate::timeline::LaneMap;

impl RastroSource {
    /// Scans `paths`, places every file on its host's clock and resolves
    /// its containers.
    pub fn open(
        paths: &[PathBuf],
        map: EventMap,
        window: i64,
        reg: &mut Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
    ) -> Result<Converted<RastroSource>> {
        let process_ty = reg.required_level(Role::Process, "libRastro traces")?;
        let thread_ty = reg.level_type(Role::Thread);
        // Each file is a lane on its own host's clock.
        let mut timeline = Timeline::lanes(window, SourceStats::default())
            .independent()
            .counting("byte");
        let (files, opened) = open_files(paths, &mut timeline, clock_of)?;
        let maps: Vec<_> = files.iter().map(|f| timeline.lane_map(f.lane)).collect();
        let seen = file_ids(&files)?;
        let (scan, in_order) = pass1(&files, &maps, opened, &map)?;
        if in_order {
            timeline.in_order();
        }
        // Pass 2 reads the files again from their start, which comes
        // first for each file: its first record's time, or its end.
        let mut records = Records::open(&files, maps, None, None, false)?;
        let mut ends = Vec::new();
        for f in &files {
            let Some(item) = records.next()?.filter(|i| !i.has_rec) else {
                return Err(Error::input("internal: a libRastro file without its start"));
            };
            match &item.after {
                After::Next(raw) => timeline.expect(f.lane, *raw),
                After::Ended(e) => {
                    timeline.close(f.lane);
                    // Files without a single event ended here.
                    ends.extend(end_note(&f.path, &e.0));
                }
            }
        }

        // Containers: each rank's Process (by pid when the map gives one),
        // each thread's container under it (by tid, so that the kernel's
        // view of the same thread lands in the same container).
        let rank_container = rank_containers(&files, &scan, process_ty, reg);
        let mut rows = Vec::with_capacity(files.len());
        let mut state_tys: HashMap<TypeId, (TypeId, TypeId)> = HashMap::new();
        for (i, f) in files.iter().enumerate() {
            let process = rank_container
                .get(&f.id1)
                .copied()
                .unwrap_or(ContainerId::ROOT);
            let pid = scan.pid.get(&f.id1).copied();
            let tid = scan.tid.get(&i).copied();
            let machine = reg.container(process).parent.unwrap_or(process);
            let container = match (pid, tid) {
                _ if f.id2 == 0 && tid.is_none_or(|t| Some(t) == pid) => process,
                (Some(p), Some(t)) if p == t => process,
                (Some(p), Some(t)) => {
                    let c = reg.thread(machine, p, t).unwrap_or(process);
                    reg.rename(c, &format!("{t} thread {}", f.id2));
                    c
                }
                _ => match thread_ty {
                    Some(ty) => reg.named_child(process, ty, &format!("thread {}", f.id2)),
                    None => reg.named_child(
                        machine,
                        process_ty,
                        &format!("rank {} thread {}", f.id1, f.id2),
                    ),
                },
            };
            let cty = reg.container(container).ty;
            let (state_ty, event_ty) = *state_tys.entry(cty).or_insert_with(|| {
                (
                    reg.state_type(cty, &map.state_name),
                    reg.event_type(cty, &map.event_name),
                )
            });
            rows.push(Row {
                container,
                state_ty,
                event_ty,
                depth: 0,
            });
        }
        let file_of = seen;
        let hosts: std::collections::BTreeSet<&str> =
            files.iter().map(|f| f.host.as_str()).collect();
        let mut notes = vec![format!(
            "{} files, {} ranks on {} host(s), map {} ({})",
            files.len(),
            rank_container.len(),
            hosts.len(),
            map.name,
            map.origin
        )];
        if scan.pid.len() < rank_container.len() {
            notes.push(format!(
                "{} rank(s) without an OS pid: their Process is named by rank",
                rank_container.len() - scan.pid.len()
            ));
        }
        let first = paths.first().cloned().unwrap_or_default();
        timeline.stats = SourceStats {
            kind: "deck",
            path: first,
            more_files: paths.len().saturating_sub(1),
            // Each file is placed by its own host's clock.
            clock_host: Some(hosts.iter().copied().collect::<Vec<_>>().join(",")),
            notes,
            ..SourceStats::default()
        };
        let mut messages = MessageStats::default();
        let hix = files
            .iter()
            .map(|f| messages.clocks.host(&f.host))
            .collect();
        let map = Arc::new(map);
        let n_files = files.len();
        let conv = Conv {
            map: Arc::clone(&map),
            files,
            rows,
            rank_container: Ranks::new(rank_container, n_files),
            file_of,
            chans: scan.chans,
            partner: scan.partner,
            channels: HashMap::new(),
            link_types: HashMap::new(),
            state_values: Vec::new(),
            in_flight: HashMap::new(),
            found: Vec::new(),
            here_seq: 0,
            messages,
            hix,
            unknown_ids: BTreeMap::new(),
            missing_fields: 0,
            empty_pops: 0,
            ends,
        };
        Ok(Converted::new(
            RastroSource {
                records,
                conv,
                defs: Defs::new(&map),
            },
            timeline,
        ))
    }
}

/// Pass 1: only the records it needs, merged while every file's times go
/// forward ([`Records::open`]'s heads only); whether they all did.
fn pass1(
    files: &[FileInfo],
    maps: &[LaneMap],
    opened: Vec<RstReader<crate::input::Reader>>,
    map: &EventMap,
) -> Result<(Scan, bool)> {
    let keep = Some(pass1_types(map));
    let records = Records::open(files, maps.to_vec(), Some(opened), keep.clone(), true)?;
    match Scan::run(files, records, map) {
        Ok((scan, true)) => Ok((scan, true)),
        // A file whose times step back (the heads-only merge may then
        // order its records otherwise), or an error: the pass again,
        // every record through the merge, which meets the first error
        // where it always did.
        _ => {
            let records = Records::open(files, maps.to_vec(), None, keep, false)?;
            let (scan, _) = Scan::run(files, records, map)?;
            Ok((scan, false))
        }
    }
}

/// Opens the files, each past its INIT record, on a lane of its own
/// host's clock.
fn open_files(
    paths: &[PathBuf],
    timeline: &mut Timeline,
    clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
) -> Result<(Vec<FileInfo>, Vec<RstReader<crate::input::Reader>>)> {
    let mut clocks: HashMap<String, Clock> = HashMap::new();
    let mut files = Vec::with_capacity(paths.len());
    let mut opened = Vec::with_capacity(paths.len());
    for path in paths {
        let (reader, init) = open_file(path)?;
        let clock = *clocks
            .entry(init.host.clone())
            .or_insert_with(|| clock_of(&init.host).unwrap_or(Clock::IDENTITY));
        files.push(FileInfo {
            path: path.clone(),
            lane: timeline.file_lane(path, 0, clock),
            host: init.host,
            id1: init.id1,
            id2: init.id2,
        });
        opened.push(reader);
    }
    Ok((files, opened))
}

/// Each file by its (rank, thread) ids; two files with the same ids are
/// an error (each thread writes its own).
fn file_ids(files: &[FileInfo]) -> Result<HashMap<(u64, u64), usize>> {
    let mut seen: HashMap<(u64, u64), usize> = HashMap::new();
    for (i, f) in files.iter().enumerate() {
        if let Some(&j) = seen.get(&(f.id1, f.id2)) {
            let other = files.get(j).map(|g| g.path.display().to_string());
            return Err(Error::in_file(
                &f.path,
                format!(
                    "ids ({}, {}) are also those of {}: each thread writes its own file",
                    f.id1,
                    f.id2,
                    other.unwrap_or_default()
                ),
            ));
        }
        seen.insert((f.id1, f.id2), i);
    }
    Ok(seen)
}

/// Each rank's Process (by pid when the map gives one), on the host of
/// its thread 0.
fn rank_containers(
    files: &[FileInfo],
    scan: &Scan,
    process_ty: TypeId,
    reg: &mut Registry,
) -> BTreeMap<u64, ContainerId> {
    let mut rank_container = BTreeMap::new();
    let mut host_of_rank: BTreeMap<u64, String> = BTreeMap::new();
    for f in files {
        let h = host_of_rank.entry(f.id1).or_insert_with(|| f.host.clone());
        if f.id2 == 0 {
            *h = f.host.clone();
        }
    }
    for (&rank, host) in &host_of_rank {
        let machine = reg.machine(host, None);
        let c = match scan.pid.get(&rank) {
            Some(&pid) => {
                let c = reg.process(machine, pid).unwrap_or(machine);
                reg.rename(c, &format!("{pid} rank {rank}"));
                c
            }
            None => reg.named_child(machine, process_ty, &format!("rank {rank}")),
        };
        reg.set_rank(c, i64::try_from(rank).unwrap_or(i64::MAX));
        rank_container.insert(rank, c);
    }
    rank_container
}

/// By type id, the records pass 1 needs: those that say a pid, a tid or
/// a link end. The others stay on the decoding thread.
fn pass1_types(map: &EventMap) -> Vec<bool> {
    let mut keep = vec![false; usize::from(u16::MAX) + 1];
    for (&ty, def) in &map.events {
        let needed = def.process.is_some()
            || def.thread.is_some()
            || def.link_start.is_some()
            || def.link_end.is_some();
        if let Some(k) = keep.get_mut(usize::from(ty)) {
            *k = needed;
        }
    }
    keep
}
