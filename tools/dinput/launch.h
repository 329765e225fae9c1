// `dinput launch`: starts the worker processes of a job on this machine, the way
// `torchrun --standalone` does, and merges their output (docs/cli.md, "dinput launch").
#ifndef DINPUT_TOOL_LAUNCH_H_
#define DINPUT_TOOL_LAUNCH_H_

namespace dinput_tool {

// Runs `dinput launch` with the arguments that follow "launch" and returns the exit status of
// the tool: 0 when every worker succeeded, else the status of the first worker that failed.
// Bad arguments throw Failure, before any process starts.
int run_launch(int argc, char** argv);

// Whether launch's own options (those before the command) ask for its help.
bool launch_asks_for_help(int argc, char** argv);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_LAUNCH_H_
