from typing import Any, Callable, Iterable, List, Optional

from hashroute._hashroute import RendezvousCore

class RendezvousHash(RendezvousCore):
    seed: int
    def __init__(
        self,
        nodes: Optional[Iterable[Any]] = ...,
        seed: int = ...,
        hash_function: Optional[Callable[[str, int], int]] = ...,
    ) -> None: ...
    @property
    def nodes(self) -> List[Any]: ...
    def add_node(self, node: Any) -> None: ...
    def remove_node(self, node: Any) -> None: ...
    def get_node(self, key: Any) -> Any: ...
