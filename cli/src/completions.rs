//! `headroom completions SHELL`: the completion script for a shell, generated from the same
//! clap definition that parses the command line, so it cannot fall behind.
//!
//! ```bash
//! headroom completions bash > ~/.local/share/bash-completion/completions/headroom
//! headroom completions zsh > "${fpath[1]}/_headroom"
//! headroom completions fish > ~/.config/fish/completions/headroom.fish
//! ```

use clap_complete::Shell;

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs, mut command: clap::Command) -> anyhow::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "headroom", &mut script);
    // Through `out!`, so a closed pipe ends quietly like every other command's output.
    out!("{}", String::from_utf8_lossy(&script))?;
    Ok(())
}
