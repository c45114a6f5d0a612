//! Opening an MPE log: pass 1, then the ranks placed on their hosts'
//! clocks by their anchors, their rows, and the message channels counted.

use super::*;

/// An anchor: wall-clock epoch, MPE time (both ns) and the rank's pid.
type Anchor = (i64, i64, u32);

impl MpiSource {
    /// Scans `path` and places its ranks; `clock_of` gives a host's clock.
    /// The converter comes back with its timeline, to read the log here
    /// or on a thread of its own (`reading`, `threaded`).
    pub fn open(
        path: &Path,
        setup: MpiSetup,
        reg: &mut Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
    ) -> Result<(MpiSource, Timeline)> {
        let process_ty =
            reg.required_level(Role::Process, &format!("{}: MPI traces", path.display()))?;
        let (mut scan, preamble) = Scan::run(path)?;
        let nodes = setup.nodes.map(read_nodes).transpose()?;
        let world = world_ranks(preamble.as_ref(), &scan, path)?;
        let anchors = anchors(&scan, path)?;
        let placed = Placing {
            path,
            setup: &setup,
            scan: &scan,
            nodes: nodes.as_deref(),
            anchors: &anchors,
            process_ty,
        };
        // Every rank is a lane: MPE time, which all ranks share, placed by
        // the rank's anchor and corrected by its host's clock.
        let mut timeline = Timeline::lanes(setup.window, SourceStats::default()).counting("byte");
        if scan.order.in_order() {
            timeline.in_order();
        }
        let (mut ranks, notes) = placed.place(&world, reg, clock_of, &mut timeline)?;
        let (rows, who) = rows(&scan, &ranks, reg);
        let (mut messages, chans) = channels(&scan, reg);
        for r in ranks.values_mut() {
            r.hix = messages.clocks.host(&r.host);
        }

        // A state or event type belongs to one container type: MPE threads
        // on Thread containers get the Thread type's own.
        let mpi = std::sync::Arc::clone(setup.config);
        let mut kinds = vec![Kinds::new(reg, process_ty, &mpi, &scan)];
        let thread_ty = reg.level_type(Role::Thread);
        if let Some(ty) = thread_ty.filter(|_| rows.iter().any(|r| r.kind == 1)) {
            kinds.push(Kinds::new(reg, ty, &mpi, &scan));
        }

        let hosts: BTreeSet<&str> = ranks.values().map(|r| r.host.as_str()).collect();
        timeline.stats = SourceStats {
            kind: "mpi",
            path: path.to_path_buf(),
            clock_host: Some(hosts.into_iter().collect::<Vec<_>>().join(",")),
            notes,
            ..SourceStats::default()
        };
        // The states' event types go to the converter's lookup.
        let etypes = lookup::Etypes::new(std::mem::take(&mut scan.state_of_etype));
        // Keyed as (communicator, rank, 0): the lookup by rank of `who`.
        let wranks = lookup::ByRank::new(
            scan.comm
                .iter()
                .map(|(&(icomm, rank), &w)| ((icomm, rank, 0), w))
                .collect(),
        );
        let mut converter = MpiSource {
            path: path.to_path_buf(),
            config: std::sync::Arc::clone(&mpi),
            scan,
            ranks: ranks.into_iter().collect(),
            rows,
            who: lookup::ByRank::new(who),
            etypes,
            chans: Chans::new(chans.into_iter().collect()),
            wranks,
            kinds,
            link_name: mpi.link_name.clone(),
            messages,
            unmatched_ends: 0,
            leftover_starts: 0,
            crossed: 0,
            unknown_partner: 0,
        };
        converter.make_values(reg);
        Ok((converter, timeline))
    }

    /// The log read by the run's thread.
    pub(super) fn reading(self) -> Result<Reading<scan::Records<crate::input::Reader>>> {
        let records = scan::Records::open(&self.path)?;
        Ok(Reading {
            source: self,
            records,
        })
    }

    /// Converts the log on a thread of its own (the caller claimed a
    /// core: crate::prefetch::claim), decoded on another
    /// ([`scan::Fed`]), which opens it.
    pub(super) fn threaded(self, timeline: Timeline) -> Result<crate::source::Threaded> {
        let format = scan::format(&self.path)?;
        Ok(crate::source::Threaded::spawn(timeline, move || {
            let records = scan::Fed::spawn(&self.path, format);
            Ok(Reading {
                source: self,
                records,
            })
        }))
    }
}

/// Every world rank that logged an event. The preamble says how many there
/// are, so a rank beyond that is a damaged record, not a rank to place
/// (with --mpi-start it would become a phantom row).
fn world_ranks(
    preamble: Option<&integrador_clog::Preamble>,
    scan: &Scan,
    path: &Path,
) -> Result<BTreeSet<i32>> {
    let size = preamble.and_then(|p| p.int("max_comm_world_size"));
    let mut world: BTreeSet<i32> = BTreeSet::new();
    let mut firsts: Vec<_> = scan.seen.iter().map(|(&k, s)| (k, s.first_at)).collect();
    firsts.sort_by_key(|&(_, at)| at);
    for ((icomm, rank), at) in firsts {
        let w = scan.wrank(icomm, rank);
        if let Some(size) = size.filter(|&n| n > 0 && (w < 0 || i64::from(w) >= n)) {
            return Err(Error::in_file(
                path,
                format!("byte {at}: rank {w} is outside the log's {size} ranks (max_comm_world_size): the record is damaged"),
            ));
        }
        world.insert(w);
    }
    Ok(world)
}

/// The anchors, found by the name of their event, per world rank.
fn anchors(scan: &Scan, path: &Path) -> Result<BTreeMap<i32, Anchor>> {
    let mut anchors = BTreeMap::new();
    let anchor_id = scan
        .events
        .iter()
        .filter(|(_, (name, _))| name == ANCHOR_NAME)
        .map(|(&id, _)| id)
        .min();
    let Some(id) = anchor_id else {
        return Ok(anchors);
    };
    let mut found: Vec<_> = scan
        .cargo_first
        .iter()
        .filter(|((etype, _, _), _)| *etype == id)
        .collect();
    found.sort_by_key(|(_, (_, _, offset))| *offset);
    for ((_, icomm, rank), (time, bytes, offset)) in found {
        let wrank = scan.wrank(*icomm, *rank);
        let bad = |what: &str| {
            Error::in_file(
                path,
                format!("byte {offset}: {ANCHOR_NAME} event of rank {wrank}: {what}"),
            )
        };
        let text = cargo_string(bytes)
            .and_then(|t| std::str::from_utf8(t).ok())
            .ok_or_else(|| bad("cargo is not MPE `s`-packed text"))?;
        let mut words = text.split_ascii_whitespace();
        let (Some(epoch), Some(pid), None) = (words.next(), words.next(), words.next()) else {
            return Err(bad(&format!(
                "cargo `{text}` is not `<epoch_seconds>.<microseconds> <pid>`"
            )));
        };
        let epoch = parse_epoch_ns(epoch.as_bytes())
            .ok_or_else(|| bad(&format!("`{epoch}` is not epoch seconds")))?;
        let pid: u32 = pid
            .parse()
            .map_err(|_| bad(&format!("`{pid}` is not a pid")))?;
        let mpe = seconds_to_ns(*time)
            .ok_or_else(|| bad("its time is not a finite number of seconds"))?;
        anchors.entry(wrank).or_insert((epoch, mpe, pid));
    }
    Ok(anchors)
}

/// What placing the ranks on hosts and clocks needs.
struct Placing<'a> {
    path: &'a Path,
    setup: &'a MpiSetup<'a>,
    scan: &'a Scan,
    nodes: Option<&'a [(String, u32)]>,
    anchors: &'a BTreeMap<i32, Anchor>,
    process_ty: TypeId,
}

impl Placing<'_> {
    /// Each rank's host, container, wall-clock offset and clock; and the
    /// notes on the anchors for the summary.
    fn place(
        &self,
        world: &BTreeSet<i32>,
        reg: &mut Registry,
        clock_of: &mut dyn FnMut(&str) -> Option<Clock>,
        timeline: &mut Timeline,
    ) -> Result<(BTreeMap<i32, Rank>, Vec<String>)> {
        let mut ranks = BTreeMap::new();
        let mut notes = Vec::new();
        let mut by_host: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for &w in world {
            let host = self.host(w)?;
            let machine = reg.machine(&host, None);
            let (offset, container) = match self.anchors.get(&w) {
                Some(&(epoch, mpe, pid)) => {
                    let c = reg.process(machine, pid).unwrap_or(machine);
                    reg.rename(c, &format!("{pid} rank {w}"));
                    reg.set_rank(c, i64::from(w));
                    by_host.entry(host.clone()).or_default().push(epoch - mpe);
                    (epoch - mpe, c)
                }
                None => {
                    let Some(start) = self.setup.start else {
                        return Err(Error::usage(format!(
                            "{}: rank {w} has no {ANCHOR_NAME} event (docs/formats.md §5), so its wall-clock start is unknown: give --mpi-start <epoch seconds> or `start` in the hierarchy's [mpi] section",
                            self.path.display()
                        )));
                    };
                    notes.push(format!(
                        "rank {w} on {host}: no anchor; placed by the given start {}",
                        crate::time::seconds(start)
                    ));
                    let name = format!("rank {w}");
                    let c = reg.named_child(machine, self.process_ty, &name);
                    reg.set_rank(c, i64::from(w));
                    (start, c)
                }
            };
            let lane = timeline.lane(offset, clock_of(&host).unwrap_or(Clock::IDENTITY));
            ranks.insert(
                w,
                Rank {
                    lane,
                    host,
                    hix: 0,
                    container,
                },
            );
        }
        let (spread, per_host) = anchor_notes(&by_host);
        let mut all_notes: Vec<String> = spread.into_iter().collect();
        all_notes.extend(notes);
        all_notes.extend(per_host);
        for (w, (epoch, mpe, pid)) in self.anchors {
            if let Some(r) = ranks.get(w) {
                all_notes.push(format!(
                    // The anchor's epoch has microseconds, and its two clock
                    // reads are a call apart: the placing's uncertainty.
                    "rank {w} on {}: pid {pid}, anchor {} (± 1us) at MPE time {} s, offset {}",
                    r.host,
                    crate::time::seconds(*epoch),
                    crate::time::seconds(*mpe),
                    crate::time::seconds(epoch - mpe)
                ));
            }
        }
        Ok((ranks, all_notes))
    }

    /// The host of world rank `w`: the nodes file, else the processor name
    /// the log records.
    fn host(&self, w: i32) -> Result<String> {
        let scan = self.scan;
        match (self.nodes, u32::try_from(w)) {
            (Some(nodes), Ok(r)) => host_of_rank(nodes, r).map(str::to_string),
            _ => None,
        }
        .or_else(|| scan.processor.get(&w).map(|(_, p)| p.clone()))
        .or_else(|| {
            let (icomm, _) = scan.processor.get(&w)?;
            scan.table
                .iter()
                .find(|e| e.local_id == *icomm)
                .map(|e| e.gcomm.processor.clone())
        })
        .filter(|h| !h.is_empty())
        .ok_or_else(|| {
            // A missing option is a usage problem (README, "Exit status");
            // a nodes file given but too short is a problem of that input.
            let what = format!(
                "{}: rank {w}: no host: the log records no processor name for it",
                self.path.display()
            );
            match self.setup.nodes {
                None => Error::usage(format!("{what}; give the MPI nodes file (-mpinodes)")),
                Some(n) => Error::input(format!(
                    "{what}, and the MPI nodes file {} places no rank {w}",
                    n.display()
                )),
            }
        })
    }
}

/// The summary's lines on the anchor offsets: their spread over the run,
/// and on each host with several ranks.
fn anchor_notes(by_host: &BTreeMap<String, Vec<i64>>) -> (Option<String>, Vec<String>) {
    let mut notes = Vec::new();
    let all: Vec<i64> = by_host.values().flatten().copied().collect();
    let spread = match (all.iter().min(), all.iter().max()) {
        (Some(lo), Some(hi)) => Some(format!(
            "anchors: {} rank(s) on {} host(s), offsets {} to {} (spread {})",
            all.len(),
            by_host.len(),
            crate::time::seconds(*lo),
            crate::time::seconds(*hi),
            crate::time::format_duration(hi - lo)
        )),
        _ => None,
    };
    for (host, offsets) in by_host.iter().filter(|(_, o)| o.len() > 1) {
        let lo = offsets.iter().min().copied().unwrap_or(0);
        let hi = offsets.iter().max().copied().unwrap_or(0);
        notes.push(format!(
            "anchors on {host}: {} ranks, offsets spread {}",
            offsets.len(),
            crate::time::format_duration(hi - lo)
        ));
    }
    (spread, notes)
}

/// The rows of every (rank, MPE thread), with how many events each will
/// see, and where each (icomm, rank, MPE thread) of the records goes.
fn rows(
    scan: &Scan,
    ranks: &BTreeMap<i32, Rank>,
    reg: &mut Registry,
) -> (Vec<Row>, HashMap<lookup::Key, Who>) {
    let thread_ty = reg.level_type(Role::Thread);
    let mut rows: Vec<Row> = Vec::new();
    let mut index: HashMap<(i32, i32), usize> = HashMap::new();
    let mut who = HashMap::new();
    let mut row_keys: Vec<_> = scan.row_events().collect();
    row_keys.sort();
    for ((icomm, rank, thread), n) in row_keys {
        let w = scan.wrank(icomm, rank);
        let Some(r) = ranks.get(&w) else { continue };
        let i = *index.entry((w, thread)).or_insert_with(|| {
            let (container, kind) = match (thread, thread_ty) {
                (0, _) | (_, None) => (r.container, 0),
                (t, Some(ty)) => (
                    reg.named_child(r.container, ty, &format!("mpe thread {t}")),
                    1,
                ),
            };
            rows.push(Row {
                container,
                kind,
                stack: Vec::new(),
                left: 0,
                started: false,
            });
            rows.len() - 1
        });
        if let Some(row) = rows.get_mut(i) {
            row.left += n;
        }
        who.insert(
            (icomm, rank, thread),
            Who {
                me: w,
                lane: r.lane,
                row: i,
            },
        );
    }
    (rows, who)
}

/// The (sender, receiver, tag) channels in a fixed order, so link keys are
/// deterministic, with what pass 1 counted of their sends and receives.
fn channels(scan: &Scan, reg: &mut Registry) -> (MessageStats, HashMap<(i32, i32, i32), Chan>) {
    let mut counts: BTreeMap<(i32, i32, i32), (u64, u64)> = BTreeMap::new();
    for (&(hicomm, hrank, micomm, mrank, tag, send), &n) in &scan.msgs {
        let me = scan.wrank(hicomm, hrank);
        let partner = scan.wrank(micomm, mrank);
        let key = if send {
            (me, partner, tag)
        } else {
            (partner, me, tag)
        };
        let c = counts.entry(key).or_default();
        if send {
            c.0 += n;
        } else {
            c.1 += n;
        }
    }
    let mut messages = MessageStats::default();
    let mut chans = HashMap::new();
    for (&(src, dst, tag), &(sends, recvs)) in &counts {
        let matched = sends.min(recvs);
        messages.matched += matched;
        if sends > matched {
            messages.unmatched_sends += sends - matched;
            messages.unmatched.push(format!(
                "{src}->{dst} tag {tag}: {} send(s) without a receive",
                sends - matched
            ));
        }
        if recvs > matched {
            messages.unmatched_recvs += recvs - matched;
            messages.unmatched.push(format!(
                "{src}->{dst} tag {tag}: {} receive(s) without a send",
                recvs - matched
            ));
        }
        chans.insert(
            (src, dst, tag),
            Chan {
                id: reg.link_channel(),
                matched,
                sends: 0,
                recvs: 0,
                send_times: VecDeque::new(),
                recv_times: VecDeque::new(),
                ends: None,
            },
        );
    }
    (messages, chans)
}
