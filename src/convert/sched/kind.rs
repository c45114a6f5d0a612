//! `-os` as a kind of source: its options, its section, which reader
//! each file gets, and the machine each trace is placed on.

use super::*;

/// `-os`: kernel scheduler traces, one source per file: the thesis' `.os`
/// recordings and ftrace, trace-cmd report and perf script text, told
/// apart by content unless `--os-format` says.
#[derive(Default)]
pub struct KernelKind {
    files: Vec<PathBuf>,
    format: Option<Input>,
    boot_epoch: Option<i64>,
    /// `--os-host`: per file name or path, and for every file (`None`).
    hosts: Vec<(Option<String>, String)>,
    os: Arc<OsConfig>,
}

/// `--os-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FormatArg {
    /// The thesis' .os recording
    Os,
    /// tracefs `trace` text
    Ftrace,
    /// `trace-cmd report` text
    TraceCmd,
    /// `perf script` text
    Perf,
    /// trace-cmd record's binary file
    TraceDat,
}

impl crate::convert::SourceKind for KernelKind {
    fn option(&self) -> &'static str {
        "-os"
    }

    fn section(&self) -> Option<&'static str> {
        Some("os")
    }

    fn configure(
        &mut self,
        text: &crate::hierarchy::Text<'_>,
    ) -> Result<Vec<crate::convert::Named>> {
        self.os = Arc::new(OsConfig::read(text)?);
        Ok(Vec::new())
    }

    fn args(&self) -> Vec<clap::Arg> {
        const H: &str = "Kernel traces";
        vec![
            crate::convert::files_arg(
                "os",
                "FILES",
                "Kernel scheduler traces: .os, ftrace text, trace-cmd report, perf script; also -os",
                H,
            ),
            crate::convert::value_arg("os-format", "FORMAT", "Override content detection of -os files", H)
                .value_parser(clap::builder::EnumValueParser::<FormatArg>::new()),
            crate::convert::value_arg(
                "boot-epoch",
                "SECONDS",
                "Boot time (epoch seconds) of boot-relative traces without a marker",
                H,
            )
            .allow_negative_numbers(true),
            clap::Arg::new("os-host")
                .long("os-host")
                .value_name("[FILE=]HOST")
                .action(clap::ArgAction::Append)
                .help("Machine of kernel traces that name none: HOST for every such trace, FILE=HOST for one (by path or file name); repeatable")
                .help_heading(H),
        ]
    }

    fn thesis_options(&self) -> &'static [&'static str] {
        &["os"]
    }

    fn take(&mut self, m: &clap::ArgMatches) -> Result<()> {
        self.files = crate::convert::expand("-os", &crate::convert::words(m, "os"))?;
        self.format = m.get_one::<FormatArg>("os-format").map(|f| match f {
            FormatArg::Os => Input::Text(Format::Os),
            FormatArg::Ftrace => Input::Text(Format::Ftrace),
            FormatArg::TraceCmd => Input::Text(Format::TraceCmd),
            FormatArg::Perf => Input::Text(Format::Perf),
            FormatArg::TraceDat => Input::Dat,
        });
        self.boot_epoch = crate::convert::epoch_arg(m, "boot-epoch", "1795262171.292101")?;
        self.hosts = crate::convert::words(m, "os-host")
            .into_iter()
            .map(|w| match w.split_once('=') {
                Some((file, host)) => (Some(file.to_string()), host.to_string()),
                None => (None, w),
            })
            .collect();
        if let Some((_, h)) = self.hosts.iter().find(|(_, h)| h.is_empty()) {
            return Err(Error::usage(format!(
                "--os-host `{h}`: expected [FILE=]HOST"
            )));
        }
        Ok(())
    }

    fn has_inputs(&self) -> bool {
        !self.files.is_empty()
    }

    fn named_files(&self) -> Vec<crate::convert::Named> {
        self.files.iter().map(|p| ("-os", p.clone())).collect()
    }

    fn opens_last(&self) -> bool {
        // A trace that names no machine may take the one machine the
        // other sources name, so they open first.
        true
    }

    fn list(&mut self) -> Result<Vec<PathBuf>> {
        crate::convert::refuse_directories("-os", &self.files, "*")?;
        Ok(self.files.clone())
    }

    fn open(&mut self, cx: &mut crate::convert::OpenCx<'_>) -> Result<()> {
        let window = cx.cfg.reorder_window;
        let others = machines(cx.reg);
        for path in &self.files {
            if !cx.wants(std::slice::from_ref(path)) {
                continue;
            }
            let input = match self.format {
                Some(f) => f,
                None => {
                    let head = crate::convert::head(path)?;
                    if integrador_tracedat::detect(&head) {
                        Input::Dat
                    } else {
                        Input::Text(integrador_sched::detect(&head))
                    }
                }
            };
            if input == Input::Text(Format::Os) {
                let source = crate::convert::os::OsSource::open(
                    path,
                    (window, &self.os),
                    cx.reg,
                    cx.clock_of,
                )?;
                cx.sources.push(Box::new(source));
                continue;
            }
            let scan = match input {
                Input::Text(format) => Scan::run(path, format)?,
                Input::Dat => Scan::run_dat(path)?,
            };
            let (host, how) = self.host(path, &scan, &others)?;
            if how.starts_with("the file's name") {
                cx.reg.warnings.push(format!(
                    "{}: no machine named for this kernel trace: shown as `{host}`, its file name; give --os-host {}=HOST",
                    path.display(),
                    path.display()
                ));
            }
            let anchor = Anchor::of(&scan.markers, self.boot_epoch.or(self.os.boot_epoch));
            if anchor == Anchor::None {
                cx.boot_relative.push(Error::usage(format!(
                    "{}: the trace clock counts from boot and the other inputs are on the wall clock: give --boot-epoch EPOCH, set `boot_epoch` in the hierarchy's [os] section, or write an integrador_epoch= marker into the trace (docs/formats.md §6)",
                    path.display()
                )));
            }
            let clock = (cx.clock_of)(&host).unwrap_or(Clock::IDENTITY);
            let placement = Placement { host, how, anchor };
            let source = SchedSource::open(
                path,
                (input, &placement, scan),
                (window, &self.os),
                cx.reg,
                clock,
            )?;
            cx.sources.push(Box::new(source));
        }
        Ok(())
    }
}

impl KernelKind {
    /// The machine of a text trace and how it was found, first that
    /// applies: the trace's own record (a marker's `host=`, the header),
    /// `--os-host`, the hierarchy's `[os] host`, the one machine the other
    /// sources name, the file's name.
    fn host(&self, path: &Path, scan: &Scan, others: &[String]) -> Result<(String, String)> {
        if let Some(h) = &scan.marker_host {
            return Ok((h.clone(), "named by its marker".into()));
        }
        if let Some(h) = &scan.uname_host {
            return Ok((h.clone(), "named by its uname".into()));
        }
        if let Some(h) = header_host(path)? {
            return Ok((h, "named by its header".into()));
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let given = path.display().to_string();
        let per_file = self.hosts.iter().find(|(f, _)| {
            f.as_deref()
                .is_some_and(|f| f == given || Some(f) == name.as_deref())
        });
        if let Some((_, h)) = per_file.or_else(|| self.hosts.iter().find(|(f, _)| f.is_none())) {
            return Ok((h.clone(), "--os-host".into()));
        }
        if let Some(h) = &self.os.host {
            return Ok((h.clone(), "the hierarchy's [os] host".into()));
        }
        if let [one] = others {
            return Ok((one.clone(), "the one machine the other sources name".into()));
        }
        Ok((
            crate::convert::os::host_of(path, None),
            "the file's name: nothing else names its machine".into(),
        ))
    }
}

/// The machines the sources opened so far name.
fn machines(reg: &Registry) -> Vec<String> {
    let Some(ty) = reg.level_type(Role::Machine) else {
        return Vec::new();
    };
    reg.containers()
        .iter()
        .filter(|c| c.ty == ty)
        .map(|c| c.name.to_string())
        .collect()
}
