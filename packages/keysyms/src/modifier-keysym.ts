// The ranges Xlib's IsModifierKey uses: Shift_L..Hyper_R, ISO_Lock..ISO_Level5_Lock, Mode_switch, Num_Lock.
/** Whether a keysym names a modifier key, which is pressed as itself and never needs Shift to reach its level. */
export function isModifierKeysym(keysym: number): boolean {
  return (
    (keysym >= 0xffe1 && keysym <= 0xffee) ||
    (keysym >= 0xfe01 && keysym <= 0xfe13) ||
    keysym === 0xff7e ||
    keysym === 0xff7f
  );
}
