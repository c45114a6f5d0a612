//! Opening a libRastro run: pass 1, then every file placed on its host's
//! clock and its containers resolved.

use super::scan::Scan;
use super::walk::Walk;
use super::*;

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
        let mut clocks: HashMap<String, Clock> = HashMap::new();
        let mut walk = Walk::open(paths)?;
        for f in &mut walk.files {
            let clock = *clocks
                .entry(f.host.clone())
                .or_insert_with(|| clock_of(&f.host).unwrap_or(Clock::IDENTITY));
            f.lane = timeline.file_lane(&f.path, 0, clock);
        }
        walk.start(&timeline)?;
        let seen = file_ids(&walk)?;
        let (scan, bad) = Scan::run(&mut walk, &timeline, &map)?;
        // Pass 2 reads the files again from their start.
        let lanes: Vec<Lane> = walk.files.iter().map(|f| f.lane).collect();
        let mut walk = Walk::open(paths)?;
        for (f, lane) in walk.files.iter_mut().zip(lanes) {
            f.lane = lane;
        }
        walk.start(&timeline)?;
        for f in &walk.files {
            match f.reader.end() {
                End::Open => timeline.expect(f.lane, f.rec.time_ns),
                _ => timeline.close(f.lane),
            }
        }

        // Containers: each rank's Process (by pid when the map gives one),
        // each thread's container under it (by tid, so that the kernel's
        // view of the same thread lands in the same container).
        let rank_container = rank_containers(&walk, &scan, process_ty, reg);
        let mut rows = Vec::with_capacity(walk.files.len());
        let mut state_tys: HashMap<TypeId, (TypeId, TypeId)> = HashMap::new();
        for (i, f) in walk.files.iter().enumerate() {
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
            walk.files.iter().map(|f| f.host.as_str()).collect();
        let mut notes = vec![format!(
            "{} files, {} ranks on {} host(s), map {} ({})",
            walk.files.len(),
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
        // Files without a single event ended while being opened.
        let ends: Vec<String> = walk
            .files
            .iter()
            .filter(|f| *f.reader.end() != End::Open)
            .filter_map(end_note)
            .collect();
        let mut messages = MessageStats::default();
        let hix = walk
            .files
            .iter()
            .map(|f| messages.clocks.host(&f.host))
            .collect();
        let source = RastroSource {
            map: Arc::new(map),
            walk,
            rows,
            rank_container,
            file_of,
            bad,
            partner: scan.partner,
            keys: Keys {
                fifo: HashMap::new(),
            },
            channels: HashMap::new(),
            state_values: HashMap::new(),
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
        Ok(Converted::new(source, timeline))
    }
}

/// Each file by its (rank, thread) ids; two files with the same ids are
/// an error (each thread writes its own).
fn file_ids(walk: &Walk) -> Result<HashMap<(u64, u64), usize>> {
    let mut seen: HashMap<(u64, u64), usize> = HashMap::new();
    for (i, f) in walk.files.iter().enumerate() {
        if let Some(&j) = seen.get(&(f.id1, f.id2)) {
            let other = walk.files.get(j).map(|g| g.path.display().to_string());
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
    walk: &Walk,
    scan: &Scan,
    process_ty: TypeId,
    reg: &mut Registry,
) -> BTreeMap<u64, ContainerId> {
    let mut rank_container = BTreeMap::new();
    let mut host_of_rank: BTreeMap<u64, String> = BTreeMap::new();
    for f in &walk.files {
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
        rank_container.insert(rank, c);
    }
    rank_container
}
