"""The FSM fabric: the crossbar, its arbiter and controllers, the whole fabric."""
