//! The `tacho` command.

fn main() -> std::process::ExitCode {
    tacho::cli::main()
}
