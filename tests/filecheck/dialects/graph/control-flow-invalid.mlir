// The verifiers of graph.cond, graph.while and graph.for reject regions whose
// types do not match their op, with a message that says what is wrong. Each
// chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

func.func @predicate_not_scalar(%p: !graph.tensor<[N], i1>, %a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{graph.cond predicate must be a 0-d bool tensor !graph.tensor<[], i1>, not !graph.tensor<[N], i1>}}
  %r = graph.cond %p (%a) : !graph.tensor<[N], i1>, (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%x: !graph.tensor<[N], f32>):
    graph.yield %x : !graph.tensor<[N], f32>
  } else {
  ^bb0(%x: !graph.tensor<[N], f32>):
    graph.yield %x : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

func.func @branches_differ(%p: !graph.tensor<[], i1>, %a: !graph.tensor<[N], f32>, %b: !graph.tensor<[M], f32>) {
  // expected-error@+1 {{graph.cond else region yields (!graph.tensor<[M], f32>) but must yield (!graph.tensor<[N], f32>)}}
  %r = graph.cond %p (%a, %b) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>, !graph.tensor<[M], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[M], f32>):
    graph.yield %x : !graph.tensor<[N], f32>
  } else {
  ^bb0(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[M], f32>):
    graph.yield %y : !graph.tensor<[M], f32>
  }
  func.return
}

// -----

func.func @block_arguments(%p: !graph.tensor<[], i1>, %a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{graph.cond then region takes () but must take (!graph.tensor<[N], f32>)}}
  %r = graph.cond %p (%a) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
    %c = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
    graph.yield %c : !graph.tensor<[N], f32>
  } else {
  ^bb0(%x: !graph.tensor<[N], f32>):
    graph.yield %x : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

// Regions are isolated from above: values enter as operands.
func.func @isolated(%p: !graph.tensor<[], i1>, %a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{Operation using value defined out of its IsolatedFromAbove parent}}
  %r = graph.cond %p () : !graph.tensor<[], i1>, () -> (!graph.tensor<[N], f32>) {
    graph.yield %a : !graph.tensor<[N], f32>
  } else {
    graph.yield %a : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

func.func @carry_changes_type(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{graph.while body region yields (!graph.tensor<[N], f16>) but must yield (!graph.tensor<[N], f32>)}}
  %r = graph.while (%a) : (!graph.tensor<[N], f32>) cond {
  ^bb0(%x: !graph.tensor<[N], f32>):
    %p = graph.constant true -> !graph.tensor<[], i1>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%x: !graph.tensor<[N], f32>):
    %h = graph.cast %x : !graph.tensor<[N], f32> -> !graph.tensor<[N], f16>
    graph.yield %h : !graph.tensor<[N], f16>
  }
  func.return
}

// -----

func.func @while_predicate(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{graph.while cond region yields (!graph.tensor<[N], f32>) but must yield (!graph.tensor<[], i1>)}}
  %r = graph.while (%a) : (!graph.tensor<[N], f32>) cond {
  ^bb0(%x: !graph.tensor<[N], f32>):
    graph.yield %x : !graph.tensor<[N], f32>
  } body {
  ^bb0(%x: !graph.tensor<[N], f32>):
    graph.yield %x : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

func.func @xs_length(%c: !graph.tensor<[], f32>, %xs: !graph.tensor<[M], f32>) {
  // expected-error@+1 {{graph.for xs 0 has type !graph.tensor<[M], f32>, whose leading dim must be the length N}}
  %r = graph.for N carries (%c) : (!graph.tensor<[], f32>) xs (%xs) : (!graph.tensor<[M], f32>) -> (!graph.tensor<[], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[], f32>, %x: !graph.tensor<[], f32>):
    graph.yield %s : !graph.tensor<[], f32>
  }
  func.return
}

// -----

func.func @index_type(%c: !graph.tensor<[], f32>) {
  // expected-error@+1 {{graph.for body region takes (!graph.tensor<[], i32>, !graph.tensor<[], f32>) but must take (!graph.tensor<[], i64>, !graph.tensor<[], f32>)}}
  %r = graph.for N carries (%c) : (!graph.tensor<[], f32>) xs () : () -> (!graph.tensor<[], f32>) {
  ^bb0(%i: !graph.tensor<[], i32>, %s: !graph.tensor<[], f32>):
    graph.yield %s : !graph.tensor<[], f32>
  }
  func.return
}

// -----

func.func @ys_length(%c: !graph.tensor<[], f32>) {
  // expected-error@+1 {{graph.for ys result !graph.tensor<[N - 1], f32> must have the length N as its leading dim}}
  %r:2 = graph.for N carries (%c) : (!graph.tensor<[], f32>) xs () : () -> (!graph.tensor<[], f32>, !graph.tensor<[N - 1], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[], f32>):
    graph.yield %s, %s : !graph.tensor<[], f32>, !graph.tensor<[], f32>
  }
  func.return
}

// -----

func.func @carry_results(%c: !graph.tensor<[], f32>) {
  // expected-error@+1 {{graph.for results (!graph.tensor<[], i64>) must begin with the carries' types (!graph.tensor<[], f32>)}}
  %r = graph.for 4 carries (%c) : (!graph.tensor<[], f32>) xs () : () -> (!graph.tensor<[], i64>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[], f32>):
    graph.yield %s : !graph.tensor<[], f32>
  }
  func.return
}

// -----

func.func @negative_length(%c: !graph.tensor<[], f32>) {
  // expected-error@+1 {{graph.for length -1 is negative}}
  %r = graph.for -1 carries (%c) : (!graph.tensor<[], f32>) xs () : () -> (!graph.tensor<[], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[], f32>):
    graph.yield %s : !graph.tensor<[], f32>
  }
  func.return
}

// -----

func.func @yield_outside(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{'graph.yield' expects parent op to be one of 'graph.cond', 'graph.while', 'graph.for'}}
  graph.yield %a : !graph.tensor<[N], f32>
}
