//! `-ganglia` as a kind of source: its options, its section, the walk of
//! directories, which reader each file gets.

use super::*;

/// `-ganglia`: `.traced` recordings and RRD dumps one source per file,
/// XML snapshots one source for the whole series; directories are walked
/// (snapshot series, gmetad's tree of RRD dumps).
#[derive(Default)]
pub struct GangliaKind {
    /// The files and directories given.
    given: Vec<PathBuf>,
    format: Option<integrador_ganglia::Format>,
    collector: Option<String>,
    /// The files to read, directories walked.
    files: Vec<PathBuf>,
    config: Arc<GangliaConfig>,
}

/// `--ganglia-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FormatArg {
    /// The thesis' .traced recording
    Traced,
    /// gmond / gmetad XML
    Xml,
    /// rrdtool dump XML
    Rrd,
}

/// The reorder window of a series of Ganglia XML snapshots: gmond's
/// largest standard TMAX (boottime, cpu_num: 1200 s). A snapshot reports
/// each metric as of its TN seconds ago, up to its TMAX: a new host's
/// samples may be minutes older than the last snapshot's.
const XML_WINDOW_NS: i64 = 1_200_000_000_000;

/// The collector and cluster of files that name none: the command line,
/// else the hierarchy's `[ganglia]` section.
fn defaults(collector: Option<&String>, g: &Arc<GangliaConfig>, window: i64) -> Setup {
    Setup {
        collector: collector.cloned().or(g.defaults.collector.clone()),
        cluster: g.defaults.cluster.clone(),
        window,
        config: Arc::clone(g),
    }
}

/// The files under `dir`, recursively, in name order.
fn files_below(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::in_file(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_below(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "xml" || x == "traced") {
            out.push(p);
        }
    }
    Ok(())
}

impl crate::convert::SourceKind for GangliaKind {
    fn option(&self) -> &'static str {
        "-ganglia"
    }

    fn section(&self) -> Option<&'static str> {
        Some("ganglia")
    }

    fn configure(
        &mut self,
        text: &crate::hierarchy::Text<'_>,
    ) -> Result<Vec<crate::convert::Named>> {
        self.config = Arc::new(GangliaConfig::read(text)?);
        Ok(Vec::new())
    }

    fn args(&self) -> Vec<clap::Arg> {
        const H: &str = "Ganglia";
        vec![
            crate::convert::files_arg(
                "ganglia",
                "FILES",
                "Ganglia data: .traced recordings, gmond/gmetad XML snapshots, rrdtool dumps; also -ganglia",
                H,
            ),
            crate::convert::value_arg(
                "ganglia-format",
                "FORMAT",
                "Override content detection of -ganglia files",
                H,
            )
            .value_parser(clap::builder::EnumValueParser::<FormatArg>::new()),
            crate::convert::value_arg(
                "ganglia-collector",
                "HOST",
                "Collector host of Ganglia files that do not name one",
                H,
            ),
        ]
    }

    fn thesis_options(&self) -> &'static [&'static str] {
        &["ganglia"]
    }

    fn take(&mut self, m: &clap::ArgMatches) -> Result<()> {
        self.given = crate::convert::expand("-ganglia", &crate::convert::words(m, "ganglia"))?;
        self.format = m.get_one::<FormatArg>("ganglia-format").map(|f| match f {
            FormatArg::Traced => integrador_ganglia::Format::Traced,
            FormatArg::Xml => integrador_ganglia::Format::Xml,
            FormatArg::Rrd => integrador_ganglia::Format::RrdDump,
        });
        self.collector = m.get_one::<String>("ganglia-collector").cloned();
        Ok(())
    }

    fn has_inputs(&self) -> bool {
        !self.given.is_empty()
    }

    fn named_files(&self) -> Vec<crate::convert::Named> {
        self.given.iter().map(|p| ("-ganglia", p.clone())).collect()
    }

    fn list(&mut self) -> Result<Vec<PathBuf>> {
        for path in &self.given {
            if path.is_dir() {
                files_below(path, &mut self.files)?;
            } else {
                self.files.push(path.clone());
            }
        }
        let mut all = self.given.clone();
        all.extend(self.files.iter().cloned());
        Ok(all)
    }

    fn open(&mut self, cx: &mut crate::convert::OpenCx<'_>) -> Result<()> {
        let cfg = cx.cfg;
        let mut snapshots = Vec::new();
        for path in &self.files {
            let format = match self.format {
                Some(f) => f,
                None => integrador_ganglia::detect(&crate::convert::head(path)?),
            };
            let g = &self.config;
            let setup = defaults(self.collector.as_ref(), g, cfg.reorder_window);
            match format {
                integrador_ganglia::Format::Xml => snapshots.push(path.clone()),
                integrador_ganglia::Format::RrdDump => {
                    if !cx.wants(std::slice::from_ref(path)) {
                        continue;
                    }
                    let source = RrdSource::open(path, setup, cx.reg, cx.clock_of)?;
                    cx.sources.push(Box::new(source));
                }
                integrador_ganglia::Format::Traced => {
                    if !cx.wants(std::slice::from_ref(path)) {
                        continue;
                    }
                    let name = path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let per_file = g.files.get(&name);
                    let collector = per_file
                        .and_then(|f| f.collector.clone())
                        .or(setup.collector);
                    let cluster = per_file.and_then(|f| f.cluster.clone()).or(setup.cluster);
                    let setup = TracedSetup {
                        collector: collector.as_deref(),
                        cluster: cluster.as_deref(),
                        window: cfg.reorder_window,
                        config: g,
                    };
                    let source = TracedSource::open(path, setup, cx.reg, cx.clock_of)?;
                    cx.sources.push(Box::new(source));
                }
            }
        }
        if !snapshots.is_empty() && cx.wants(&snapshots) {
            let setup = defaults(
                self.collector.as_ref(),
                &self.config,
                cfg.reorder_window.max(XML_WINDOW_NS),
            );
            let source = XmlSource::open(snapshots, setup, cx.reg, cx.clock_of)?;
            cx.sources.push(Box::new(source));
        }
        Ok(())
    }
}
